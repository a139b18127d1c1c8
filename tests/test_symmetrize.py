"""Alignments both ways: each direction's argmax α, intersection, union, grow-diag(-final) and their AER.

The hand-made case (5 English words, 4 French words), links written (English j, French i):

* forward α (en→fr, one row per French word) links i0→j0, i1→j1, i2→j3, i3→j2:
  F = {0-0, 1-1, 3-2, 2-3};
* reverse α (fr→en, one row per English word) links j0→i0, j1→i1, j2→i3, j3→i0, j4→i0:
  R = {0-0, 1-1, 2-3, 3-0, 4-0};
* intersection I = {0-0, 1-1, 2-3}; union U = I ∪ {3-2, 3-0, 4-0};
* grow-diag, pass 1 over U − I in order: 3-0 has no kept neighbour; 3-2 aligns two unaligned words and
  touches 2-3 diagonally: kept; 4-0 has no kept neighbour. Pass 2: 3-0 now joins two aligned words
  (English 3 by 3-2, French 0 by 0-0); 4-0 still has no kept neighbour. GD = I ∪ {3-2};
* final: every forward link is kept already; of the reverse ones 3-0 joins two aligned words, 4-0 aligns
  the unaligned English word 4: GDF = GD ∪ {4-0} (final-and would not keep it: French 0 is aligned).

Gold S = {0-0, 1-1, 2-3, 4-0}, P = S ∪ {3-2}; AER = 1 − (|A∩S| + |A∩P|) / (|A| + |S|):
F 1 − (3+4)/(4+4) = 1/8; R 1 − (4+4)/(5+4) = 1/9; I 1 − (3+3)/(3+4) = 1/7; U 1 − (4+5)/(6+4) = 1/10;
GD 1 − (3+4)/(4+4) = 1/8; GDF 1 − (4+5)/(5+4) = 0.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from nmt.decoding.search import forced
from nmt.decoding.trace import DecodeTrace, StepRecord
from nmt.explanation.align import alignment_error, argmax_links, read_links
from nmt.explanation.symmetrize import flip, grow_diag, grow_diag_final, symmetrized, symmetrized_corpus
from nmt.models import checkpoint
from nmt.tools import align as align_tool
from tests.test_pages_analysis import GOLD, data_dir, downloads, run

__all__ = ["data_dir"]  # the gold set's fixture, shared with the analysis pages' tests


def _trace(src: list[str], tgt: list[str], alphas: list[list[float]]) -> DecodeTrace:
    """A forced-decoding trace with hand-made α rows (one per target word, then ``</s>``)."""
    steps = [StepRecord(i, w, 0, 0.0, True, a, a, [], 1.0, 1.0)
             for i, (w, a) in enumerate(zip([*tgt, "</s>"], alphas, strict=True))]
    return DecodeTrace(" ".join(src), [*src, "</s>"], [False] * (len(src) + 1), "forced", "attention", steps=steps)


EN = ["a", "b", "c", "d", "e"]
FR = ["w", "x", "y", "z"]
FORWARD = _trace(EN, FR, [  # en→fr: rows are French words, columns English words and </s>
    [0.6, 0.1, 0.1, 0.1, 0.05, 0.05],
    [0.1, 0.6, 0.1, 0.1, 0.05, 0.05],
    [0.1, 0.1, 0.1, 0.6, 0.05, 0.05],
    [0.1, 0.1, 0.6, 0.1, 0.05, 0.05],
    [0.0, 0.0, 0.0, 0.0, 0.0, 1.0],
])
REVERSE = _trace(FR, EN, [  # fr→en: rows are English words, columns French words and </s>
    [0.7, 0.1, 0.1, 0.05, 0.05],
    [0.1, 0.7, 0.1, 0.05, 0.05],
    [0.1, 0.1, 0.05, 0.7, 0.05],
    [0.5, 0.2, 0.2, 0.05, 0.05],
    [0.4, 0.3, 0.2, 0.05, 0.05],
    [0.0, 0.0, 0.0, 0.0, 1.0],
])
SURE = {(0, 0), (1, 1), (2, 3), (4, 0)}
POSSIBLE = SURE | {(3, 2)}


def test_links_of_both_directions_and_their_joins() -> None:
    f = argmax_links(FORWARD)
    r = flip(argmax_links(REVERSE))
    assert f == {(0, 0), (1, 1), (3, 2), (2, 3)}
    assert r == {(0, 0), (1, 1), (2, 3), (3, 0), (4, 0)}
    sets = symmetrized(f, r)
    assert sets["intersection"] == {(0, 0), (1, 1), (2, 3)}
    assert sets["union"] == {(0, 0), (1, 1), (2, 3), (3, 2), (3, 0), (4, 0)}
    assert sets["grow-diag"] == {(0, 0), (1, 1), (2, 3), (3, 2)}
    assert sets["grow-diag-final"] == {(0, 0), (1, 1), (2, 3), (3, 2), (4, 0)}


def test_aer_of_each_link_set() -> None:
    sets = symmetrized(argmax_links(FORWARD), flip(argmax_links(REVERSE)))
    expected = {"forward": 1 / 8, "reverse": 1 / 9, "intersection": 1 / 7, "union": 1 / 10,
                "grow-diag": 1 / 8, "grow-diag-final": 0.0}
    got = {m: alignment_error([a], [SURE], [POSSIBLE])["aer"] for m, a in sets.items()}
    assert got == pytest.approx(expected)


def test_growing_needs_a_neighbour_and_an_unaligned_word() -> None:
    # I = {0-0}; U − I in (source, target) order: 0-2, 1-1, 2-2. Pass 1: 0-2 has no kept neighbour yet
    # (1-1 is not kept); 1-1 touches 0-0 diagonally and aligns two new words: kept; 2-2 touches 1-1: kept.
    # Pass 2: 0-2 now joins two aligned words (English 0 by 0-0, French 2 by 2-2): never kept.
    # (Moses's pseudo-code, which walks the neighbours of each kept link, would keep 0-2 on reaching 1-1:
    # this test pins atools' visiting order.)
    f, r = {(0, 0), (1, 1), (0, 2)}, {(0, 0), (2, 2)}
    assert grow_diag(f, r) == {(0, 0), (1, 1), (2, 2)}
    assert grow_diag_final(f, r) == {(0, 0), (1, 1), (2, 2)}  # final: 0-2 joins two aligned words
    # a far link that aligns a new word is left by grow-diag and kept by the final step
    assert grow_diag({(0, 0)}, {(0, 0), (3, 3)}) == {(0, 0)}
    assert grow_diag_final({(0, 0)}, {(0, 0), (3, 3)}) == {(0, 0), (3, 3)}


def test_corpus_lengths_must_match() -> None:
    with pytest.raises(ValueError, match="2 forward link sets but 1"):
        symmetrized_corpus([set(), set()], [set()])


def _aer(a: set, s: set, p: set) -> float:
    """Och & Ney's AER written out again for one corpus of sets (independent of nmt)."""
    return 1 - (len(a & s) + len(a & (p | s))) / (len(a) + len(s))


def test_align_cli_both_ways(tiny_ckpt: Path, tiny_rev_ckpt: Path, tmp_path: Path) -> None:
    """``python -m nmt align --reverse``: the reverse model's own run (on the gold turned round) gives
    the reverse links; the joins and their AER match plain set operations on the two runs' links."""
    (tmp_path / "g.en").write_text("A man is riding a bike .\nTwo dogs are playing in the snow .\n")
    (tmp_path / "g.fr").write_text("Un homme fait du vélo .\nDeux chiens jouent dans la neige .\n")
    (tmp_path / "g.en-fr.sure").write_text("0-0 1-1 6-5\n0-0 1-1 3-2 5-3 6-4 7-5 8-6\n")
    (tmp_path / "g.en-fr.possible").write_text("3-2 3-3 3-4 5-4\n2-2\n")
    fwd, rev = tmp_path / "fwd.json", tmp_path / "rev.json"
    assert align_tool.main(["--checkpoint", str(tiny_ckpt), "--aer", str(tmp_path / "g"), "--json", str(fwd),
                            "--reverse", str(tiny_rev_ckpt)]) == 0
    assert align_tool.main(["--checkpoint", str(tiny_rev_ckpt), "--aer", str(tmp_path / "g"), "--json", str(rev)]) == 0
    res, back = json.loads(fwd.read_text()), json.loads(rev.read_text())

    def sets(lines: list[str], turn: bool = False) -> list[set]:
        return [{(int(b), int(a)) if turn else (int(a), int(b)) for a, b in (x.split("-") for x in ln.split())}
                for ln in lines]

    f, r = sets(res["links"]), sets(back["links"], turn=True)
    got = {m: sets(v) for m, v in res["symmetrized_links"].items()}
    assert got["forward"] == f and got["reverse"] == r
    assert got["intersection"] == [a & b for a, b in zip(f, r)]
    assert got["union"] == [a | b for a, b in zip(f, r)]
    assert all(i <= g <= u for i, g, u in zip(got["intersection"], got["grow-diag-final"], got["union"]))
    s = set().union(*({(k, *x) for x in a} for k, a in enumerate(sets(["0-0 1-1 6-5", "0-0 1-1 3-2 5-3 6-4 7-5 8-6"]))))
    p = s | {(0, 3, 2), (0, 3, 3), (0, 3, 4), (0, 5, 4), (1, 2, 2)}
    for m, links in got.items():
        a = set().union(*({(k, *x) for x in ln} for k, ln in enumerate(links)))
        assert res["symmetrized"][m]["aer"] == pytest.approx(_aer(a, s, p)), m
    assert res["symmetrized"]["reverse"]["aer"] == pytest.approx(back["aer"])  # the same links, the same gold


def test_align_cli_refuses_a_reverse_model_of_the_same_direction(tiny_ckpt: Path, tmp_path: Path) -> None:
    (tmp_path / "g.en").write_text("A man .\n")
    (tmp_path / "g.fr").write_text("Un homme .\n")
    (tmp_path / "g.en-fr.sure").write_text("0-0\n")
    (tmp_path / "g.en-fr.possible").write_text("\n")
    with pytest.raises(SystemExit, match="translates en→fr; it must translate fr→en"):
        align_tool.main(["--checkpoint", str(tiny_ckpt), "--aer", str(tmp_path / "g"), "--reverse", str(tiny_ckpt)])


def test_alignment_page_scores_both_ways_with_a_reverse_model(
        tiny_checkpoint_dir: Path, tiny_ckpt: Path, tiny_rev_ckpt: Path, data_dir: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The alignment browser on a gold set: without a fr→en model it says one is needed; with one in the
    folder, picking it shows six link sets whose AER matches nmt's forced decoding joined by plain set
    operations (intersection, union) and by the hand-tested grow-diag-final."""
    folder = tmp_path / "ckpts"
    folder.mkdir()
    shutil.copy(tiny_checkpoint_dir / "tiny-en-fr-rnnsearch.pt", folder)
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(folder))
    monkeypatch.setenv("RNNSEARCH_DATA", str(data_dir))
    at = run("alignment_browser.py", al_split=GOLD)
    at.button(key="al_aer").click().run()
    assert any("No fr→en model with attention" in c.value for c in at.caption)
    shutil.copy(tiny_rev_ckpt, folder / "tiny-fr-en-rnnsearch.pt")
    at = run("alignment_browser.py", al_split=GOLD)
    at.button(key="al_aer").click().run()
    assert at.selectbox(key="al_reverse").options == ["(none)", "tiny-fr-en-rnnsearch.pt"]
    at.selectbox(key="al_reverse").set_value("tiny-fr-en-rnnsearch.pt").run()
    assert not at.exception
    shown = {r["links"]: r["AER"] for r in at.dataframe[-1].value.to_dict("records")}
    gold = data_dir / GOLD.rsplit("/", 1)[0]
    src, ref = [(gold / f"test.{lang}").read_text(encoding="utf-8").splitlines() for lang in ("en", "fr")]
    fwd = [argmax_links(t) for t in forced(checkpoint.load(tiny_ckpt), src, ref, pretokenized=True)]
    rev = [{(j, i) for i, j in argmax_links(t)}
           for t in forced(checkpoint.load(tiny_rev_ckpt), ref, src, pretokenized=True)]
    sure, possible = read_links(gold / "test.en-fr.sure"), read_links(gold / "test.en-fr.possible")

    def corpus(sets: list[set]) -> set:
        return {(k, *x) for k, a in enumerate(sets) for x in a}

    s, p = corpus(sure), corpus(possible)
    want = {"forward α (argmax)": fwd, "reverse α (argmax)": rev, "intersection": [a & b for a, b in zip(fwd, rev)],
            "union": [a | b for a, b in zip(fwd, rev)],
            "grow-diag-final": [grow_diag_final(a, b) for a, b in zip(fwd, rev)]}
    for label, sets in want.items():
        assert shown[label] == pytest.approx(_aer(corpus(sets), s, p)), label
    assert "grow-diag" in shown and {"Both-ways AER JSON", "Both-ways links CSV"} <= set(downloads(at))


def test_alignment_page_turns_en_fr_gold_round_for_a_fr_en_model(
        tiny_ckpt: Path, tiny_rev_ckpt: Path, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fr→en model on the en-fr gold set: the split is offered as gold, its links are read turned round
    (French index first), and the page's AER is the one nmt computes on those turned links; the en→fr
    model is offered as its reverse."""
    folder = tmp_path / "ckpts"
    folder.mkdir()
    shutil.copy(tiny_ckpt, folder / "tiny-en-fr-rnnsearch.pt")
    shutil.copy(tiny_rev_ckpt, folder / "tiny-fr-en-rnnsearch.pt")
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(folder))
    monkeypatch.setenv("RNNSEARCH_DATA", str(data_dir))
    at = run("alignment_browser.py", al_model="tiny-fr-en-rnnsearch.pt · fr→en", al_split=GOLD)
    assert at.session_state["al_model"] == "tiny-fr-en-rnnsearch.pt"
    at.button(key="al_aer").click().run()
    assert not at.exception
    aer = float({m.label: m.value for m in at.metric}["AER"])
    gold = data_dir / GOLD.rsplit("/", 1)[0]
    src, ref = [(gold / f"test.{lang}").read_text(encoding="utf-8").splitlines() for lang in ("fr", "en")]
    links = [argmax_links(t) for t in forced(checkpoint.load(tiny_rev_ckpt), src, ref, pretokenized=True)]
    sure = [{(j, i) for i, j in a} for a in read_links(gold / "test.en-fr.sure")]
    possible = [{(j, i) for i, j in a} for a in read_links(gold / "test.en-fr.possible")]
    assert aer == pytest.approx(alignment_error(links, sure, possible)["aer"], abs=5e-4)
    assert at.selectbox(key="al_reverse").options == ["(none)", "tiny-en-fr-rnnsearch.pt"]
