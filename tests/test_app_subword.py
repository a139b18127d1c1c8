"""The stepper on an imported BPE model (tests/fixtures/joeynmt_bpe): its heatmap shows the pieces, and the
Pieces / Words switch (only for a subword model) shows words, α summed over source pieces."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from nmt.models import checkpoint
from nmt.tools.importers import joeynmt, onmt
from tests.page_app import app_at
from tests.stepper_app import click, link, qp, start, trace

FIXTURES = Path(__file__).parent / "fixtures"
# test_2016_flickr line 1: "starring" is read in three pieces, st@@ ar@@ ring
SENTENCE = "A man in an orange hat starring at something."
PIECES = ["a", "man", "in", "an", "orange", "hat", "st@@", "ar@@", "ring", "at", "something", ".", "</s>"]
WORDS = ["a", "man", "in", "an", "orange", "hat", "starring", "at", "something", ".", "</s>"]


@pytest.fixture
def bpe_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "ckpts"
    folder.mkdir()
    checkpoint.atomic_save(joeynmt.convert(FIXTURES / "joeynmt_bpe" / "model"), folder / "joey-bpe.pt")
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(folder))
    return folder


def _cells(at: AppTest) -> list[dict]:
    """The heatmap's cells (Streamlit sends the inline rows beside the spec, as an Arrow table)."""
    import pyarrow as pa

    proto = at.get("vega_lite_chart")[0].proto
    return pa.ipc.open_stream(proto.data.data).read_all().to_pylist()


def _columns(at: AppTest) -> dict[int, str]:
    return {r["j"]: r["source"] for r in _cells(at)}


def _legend(at: AppTest) -> str:
    """The caption under the stepper's heatmap (what its rows and columns are)."""
    return next(c.value for c in at.caption if c.value.startswith("Rows: "))


def test_pieces_then_words(bpe_dir: Path) -> None:
    at = start({"text": SENTENCE})
    for _ in range(4):
        click(at, "sp_btn_step")
    assert trace(at).src_tokens == PIECES
    assert at.segmented_control(key="sp_w_pieces").value == "Pieces"
    assert [w for _, w in sorted(_columns(at).items())] == PIECES
    assert _legend(at).startswith("Rows: target pieces (* = forced); columns: source pieces; ")
    at.segmented_control(key="sp_w_pieces").set_value("Words").run()
    assert not at.exception, [e.value for e in at.exception]
    assert [w for _, w in sorted(_columns(at).items())] == WORDS
    assert _legend(at).startswith("Rows: target words (* = forced); columns: source words; ")
    pieces = trace(at).steps  # the session's trace stays in pieces; only the drawing is grouped
    cells = {(r["i"], r["j"]): r["alpha"] for r in _cells(at)}
    first = pieces[0].alpha or []
    assert cells[(0, 6)] == pytest.approx(first[6] + first[7] + first[8])  # "starring" = st@@ + ar@@ + ring
    assert cells[(0, 7)] == pytest.approx(first[9])  # "at", after the grouped word
    assert sum(v for (i, _), v in cells.items() if i == 0) == pytest.approx(1.0)


def test_a_word_level_model_has_no_switch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "ckpts"
    folder.mkdir()
    checkpoint.atomic_save(joeynmt.convert(FIXTURES / "joeynmt" / "model"), folder / "joey-word.pt")
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(folder))
    at = start({"text": SENTENCE})
    click(at, "sp_btn_step")
    assert not [s for s in at.segmented_control if s.key == "sp_w_pieces"]


def test_the_beam_explorers_nbest_heatmap_switches_to_words(bpe_dir: Path) -> None:
    import pyarrow as pa

    at = app_at("pages/beam_explorer.py", 120)
    at.query_params.update({"bx_text": SENTENCE, "bx_tab": "N-best and α"})
    at.run()
    assert not at.exception, [e.value for e in at.exception]

    def sources() -> set[str]:
        proto = at.get("vega_lite_chart")[-1].proto
        rows = [r for d in proto.datasets for r in pa.ipc.open_stream(d.data.data).read_all().to_pylist()]
        return {r["source"] for r in rows if "source" in r}

    assert sources() == set(PIECES)
    at.segmented_control(key="bx_pieces").set_value("Words").run()
    assert not at.exception, [e.value for e in at.exception]
    assert sources() == set(WORDS)
    shared = app_at("pages/beam_explorer.py", 120)
    shared.query_params.update({"bx_text": SENTENCE, "bx_tab": "N-best and α", "bx_pieces": "Words"})
    shared.run()  # a shared link keeps the switch, as it keeps the page's other controls
    assert shared.segmented_control(key="bx_pieces").value == "Words"


def test_the_length_normalisation_tab_writes_a_sentencepiece_models_hypotheses_as_words(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The OpenNMT-py sentencepiece fixture at beam 5 of this app's beam (``bx_app_rules``: OpenNMT-py's own ends
    when its best row finishes, before the longer hypothesis): the ranking table writes each finished hypothesis
    as the translation boxes do (pieces joined into words), not as its pieces ("▁Un ▁homme ▁en ▁T - shirt …")."""
    pytest.importorskip("sentencepiece")  # pinned in requirements.txt
    folder = tmp_path / "ckpts"
    folder.mkdir()
    sp = FIXTURES / "onmt" / "sentencepiece" / "model_step_1500.pt"
    checkpoint.atomic_save(onmt.convert(sp, "en", "fr"), folder / "onmt-sp.pt")
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(folder))
    at = app_at("pages/beam_explorer.py", 120)
    at.query_params.update({"bx_text": SENTENCE, "bx_tab": "Length normalisation", "bx_app_rules": "true"})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    df = at.dataframe[-1].value.set_index("rank none")
    # written by hand from the pieces of the two hypotheses: ▁Un ▁homme ▁en ▁T - shirt ▁d ' ▁eau ▁. </s> and
    # the same with ▁dans ▁l ' ▁eau before ▁. (the shortest wins on raw log p, the longer one divided by length)
    assert df.loc[1, "hypothesis"] == "Un homme en T-shirt d'eau."
    assert df.set_index("rank length").loc[1, "hypothesis"] == "Un homme en T-shirt d'eau dans l'eau."
    assert not [h for h in df["hypothesis"] if "▁" in h]


def test_a_shared_link_keeps_the_words_view(bpe_dir: Path) -> None:
    """The switch is in the share link and the address bar (``words=true``), and a link with it opens on words."""
    at = start({"text": SENTENCE, "step": "2"})
    assert qp(at, "sp_words") == [] and "sp_words" not in link(at)
    at.segmented_control(key="sp_w_pieces").set_value("Words").run()
    assert qp(at, "sp_words") == ["true"] and link(at)["sp_words"] == ["true"]
    shared = start({"text": SENTENCE, "step": "2", "words": "true"})
    assert shared.segmented_control(key="sp_w_pieces").value == "Words"
    assert [w for _, w in sorted(_columns(shared).items())] == WORDS
    assert _legend(shared).startswith("Rows: target words (* = forced); columns: source words; ")
