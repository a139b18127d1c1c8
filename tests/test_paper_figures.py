"""The paper's own α (Fig. 3(a)) and how close a model's comes: Jensen–Shannon divergence against values
worked out by hand, row pairing, the shipped file's check values, and the view builders."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from nmt.explanation import paper_figures as F
from tests.page_app import app_at
from tests.traces import make_trace
from ui.figures import paper as V

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "evalsets" / F.FIG3A_FILE
EUROPARL = ROOT / "checkpoints" / "europarl-en-fr-rnnsearch-50.pt"


def test_js_divergence_against_hand_values() -> None:
    assert F.js_divergence([1, 0], [0, 1]) == pytest.approx(math.log(2))  # disjoint: ln 2
    assert F.js_divergence([0.2, 0.8], [0.2, 0.8]) == pytest.approx(0.0)
    # p = (½, ½), q = (1, 0), m = (¾, ¼): ½[½ ln(⅔) + ½ ln 2] + ½ ln(4/3) = 0.2157616
    assert F.js_divergence([0.5, 0.5], [1, 0]) == pytest.approx(0.2157616, abs=1e-7)
    assert F.js_divergence([1, 1], [2, 0]) == pytest.approx(0.2157616, abs=1e-7)  # rows renormalised first
    assert F.js_divergence([0.5, 0.5], [1, 0]) == pytest.approx(F.js_divergence([1, 0], [0.5, 0.5]))  # symmetric
    with pytest.raises(ValueError):
        F.js_divergence([0, 0], [1, 0])


def test_rows_pair_by_word_and_by_position_where_the_words_differ() -> None:
    paper = ["l’", "accord", "sur", "la", "zone", "économique", "<end>"]
    ours = ["L'", "accord", "sur", "l'", "Espace", "économique", "</s>"]
    assert F.row_pairs(paper, ours) == [(k, k) for k in range(7)]
    assert F.row_pairs(["a", "b", "c"], ["a", "c"]) == [(0, 0), (2, 1)]  # « b » has no row of ours


def test_compare_counts_top1_agreement_and_mean_js(tmp_path: Path) -> None:
    tsv = tmp_path / "fig.tsv"
    tsv.write_text("target\\source\tx\ty\t<end>\nA\t0.9\t0.1\t0\nB\t0.1\t0.9\t0\n<end>\t0\t0\t1\n", encoding="utf-8")
    paper = F.read_alpha_tsv(tsv)
    assert paper.tgt == ["A", "B", "<end>"] and paper.src == ["x", "y", "<end>"] and paper.alpha.shape == (3, 3)
    t = make_trace([[0.9, 0.1, 0.0], [0.8, 0.2, 0.0], [0.0, 0.0, 1.0]], tokens=["A", "B", "</s>"])
    t.src_tokens[:] = ["x", "y", "</s>"]
    cmp = F.compare(paper, t.src_tokens, [s.token for s in t.steps], [s.alpha for s in t.steps])
    assert [r.agrees for r in cmp.rows] == [True, False, True] and cmp.agreement == pytest.approx(2 / 3)
    assert cmp.rows[0].js == pytest.approx(0.0) and cmp.rows[1].top_word == "x"
    assert cmp.mean_js == pytest.approx(F.js_divergence([0.1, 0.9, 0], [0.8, 0.2, 0]) / 3)
    line = V.summary(cmp)
    assert "2 of 3 rows (67 %)" in line and "They part at « B »." in line and F.CREDIT in line
    assert list(V.rows_table(paper, cmp)["same top-1"]) == ["yes", "no", "yes"]
    with pytest.raises(ValueError, match="different source words"):
        F.compare(paper, ["x", "z", "</s>"], ["A"], [[1, 0, 0]])
    assert V.comparison_of(paper, make_trace([None, None], context="fixed")) is None


def test_the_shipped_fig3a_holds_the_readme_check_values() -> None:
    paper = F.read_alpha_tsv(SHIPPED)
    assert paper.alpha.shape == (15, 14)
    assert " ".join(paper.src[:-1]) == "the agreement on the European Economic Area was signed in August 1992 ."
    cell = {(t, s): paper.alpha[i, j] for i, t in enumerate(paper.tgt) for j, s in enumerate(paper.src)}
    assert (cell["zone", "Area"], cell["économique", "Economic"], cell["européenne", "European"],
            cell["signé", "signed"], cell["août", "August"], cell["accord", "agreement"]) == (
        0.71, 0.76, 0.97, 0.91, 0.96, 0.89)
    sums = paper.alpha.sum(axis=1)  # read back from grey levels: not exactly 1
    assert sums.min() == pytest.approx(0.91) and sums.max() == pytest.approx(1.0)
    assert F.find_fig3a([ROOT / "nowhere", ROOT / "evalsets"]) == SHIPPED


@pytest.mark.skipif(not EUROPARL.exists(), reason="the Europarl RNNsearch-50 is not shipped")
def test_our_europarl_model_agrees_with_the_paper_on_most_rows() -> None:
    from nmt.decoding.search import greedy
    from nmt.models import checkpoint

    t = greedy(checkpoint.load(EUROPARL), [F.FIG3A_SENTENCE])[0]
    cmp = V.comparison_of(F.read_alpha_tsv(SHIPPED), t)
    assert cmp is not None and len(cmp.rows) == 15
    assert [r.model_word for r in cmp.rows if not r.agrees] == ["L'", "</s>"]  # first and last rows differ
    assert cmp.agreement == pytest.approx(13 / 15) and 0.05 < cmp.mean_js < 0.25
    chart = V.beside_chart(F.read_alpha_tsv(SHIPPED), t).to_dict()
    assert len(chart["hconcat"]) == 2


@pytest.mark.skipif(not EUROPARL.exists(), reason="the Europarl RNNsearch-50 is not shipped")
def test_the_lesson_and_the_stepper_show_the_paper_beside_ours() -> None:
    from streamlit.testing.v1 import AppTest

    from tests.conftest import plain

    at = app_at("pages/lesson.py", 180)
    at.query_params["ls_stop"] = "7"
    at.run()
    assert not [b for b in at.button if b.key == "ls_paper"]  # only once the row is revealed
    at.button(key="ls_reveal").click().run()
    at.button(key="ls_paper").click().run()
    texts = [plain(m.value) for m in at.markdown]
    assert any(t.startswith("The paper saw this too: 13 of 15 rows (87 %)") for t in texts), texts
    stepper = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    stepper.query_params.update({"text": F.FIG3A_SENTENCE, "model": "europarl-en-fr-50", "step": "15"})
    stepper.run()
    assert not stepper.exception
    (panel,) = [e for e in stepper.expander if "The paper's own α" in e.label]
    assert any("13 of 15 rows" in plain(m.value) for m in panel.markdown)
