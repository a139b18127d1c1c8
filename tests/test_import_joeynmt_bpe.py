"""A JoeyNMT BPE model (subword-nmt codes) imported by ``python -m nmt import joeynmt`` reads, writes and
scores exactly as JoeyNMT did.

The fixture (tests/fixtures/joeynmt_bpe, made by the commands in its README.md) is a tiny GRU with
Bahdanau attention trained by JoeyNMT 2.3.0 itself on BPE pieces of Multi30k en→fr (2,000 joint
merges learned by subword-nmt), JoeyNMT's own source pieces of the 100 test sentences, and its greedy
output and per-token log-probabilities on them. JoeyNMT is not needed here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from nmt.__main__ import main as nmt_main
from nmt.decoding import search as decoding
from nmt.models import checkpoint, provenance
from nmt.tools.importers import joeynmt

FIX = Path(__file__).parent / "fixtures" / "joeynmt_bpe"
MODEL = FIX / "model"


def _lines(name: str) -> list[str]:
    return (FIX / name).read_text(encoding="utf-8").splitlines()


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> checkpoint.LoadedModel:
    """The fixture imported through the command line, then loaded as any checkpoint."""
    out = tmp_path_factory.mktemp("joey-bpe") / "joey-bpe.pt"
    assert nmt_main(["import", "joeynmt", str(MODEL), "--out", str(out)]) == 0
    return checkpoint.load(out)


def test_the_codes_travel_in_the_checkpoint(imported: checkpoint.LoadedModel) -> None:
    sub = imported.meta["tokenisation"]["subword"]
    assert sub["kind"] == "bpe" and sub["separator"] == "@@" and sub["restrict_to_vocabulary"] is True
    assert sub["codes"] == (MODEL / "bpe.codes").read_text(encoding="utf-8")
    assert imported.meta["imported"]["files_sha256"]["bpe.codes"] == joeynmt.sha256(MODEL / "bpe.codes")
    assert imported.subword == "bpe" and provenance.origin(imported.meta).startswith(
        "Imported from JoeyNMT 2.3.0 (bpe, lower-cased) · best.ckpt sha256 ")


def test_source_pieces_are_joeynmts(imported: checkpoint.LoadedModel) -> None:
    """From the raw sentence (this app's Moses tokens, lower-cased, BPE): JoeyNMT's pieces of test.en."""
    theirs = [ast.literal_eval(line) for line in _lines("test.pieces.en")]
    ours = [imported.src_tok.tokenize(raw) for raw in _lines("test.raw.en")]
    assert len(theirs) == 100 and ours == theirs
    assert sum(any(p.endswith("@@") for p in line) for line in theirs) > 50  # words really are split


def test_greedy_equals_joeynmt_line_for_line(imported: checkpoint.LoadedModel) -> None:
    """Every line's pieces, ``</s>`` included where JoeyNMT ended, and the words they join into."""
    traces = decoding.greedy(imported, _lines("test.raw.en"), max_len=joeynmt.max_output_length, topk=1)
    theirs = [ast.literal_eval(line) for line in _lines("joeynmt.test.tokens")]
    assert len(theirs) == 100
    differ = [k for k, (tr, want) in enumerate(zip(traces, theirs, strict=True)) if tr.target_tokens != want]
    assert not differ, f"{len(differ)} lines differ, first {differ[0]}: {traces[differ[0]].target_tokens} vs " \
                       f"{theirs[differ[0]]}"
    assert imported.tgt_tok.subword is not None and imported.tgt_tok.subword.kind == "bpe"
    joined = [" ".join(imported.tgt_tok.subword.decode([t for t in tr.target_tokens if t != "</s>"]))
              for tr in traces]
    assert joined == _lines("joeynmt.test")  # JoeyNMT's translation file: its pieces joined into words
    assert sum(any(t.endswith("@@") for t in want) for want in theirs) >= 4  # pieces really are written


def test_forced_log_probs_match_joeynmt(imported: checkpoint.LoadedModel) -> None:
    """Forced decoding of JoeyNMT's hypotheses (its pieces) gives JoeyNMT's own per-token log p (≤ 1e-4)."""
    sources = [" ".join(ast.literal_eval(line)) for line in _lines("test.pieces.en")]
    hyps = [" ".join(t for t in ast.literal_eval(line) if t != "</s>") for line in _lines("joeynmt.test.tokens")]
    scores = [ast.literal_eval(line) for line in _lines("joeynmt.test.scores")]
    traces = decoding.forced(imported, sources, hyps, pretokenized=True, topk=1)
    worst, compared = 0.0, 0
    for tr, theirs in zip(traces, scores, strict=True):
        ours = [s.logprob for s in tr.steps]
        assert len(ours) == len(theirs) or len(ours) == len(theirs) + 1  # + </s> when JoeyNMT hit its limit
        worst = max(worst, max(abs(a - b) for a, b in zip(ours, theirs, strict=False)))
        compared += min(len(ours), len(theirs))
    assert worst <= 1e-4, worst
    assert compared > 1000


def test_the_translation_is_detokenised_words(imported: checkpoint.LoadedModel) -> None:
    """Pieces are joined before Moses detokenises: no separator left in the text a reader sees."""
    tr = decoding.greedy(imported, _lines("test.raw.en")[:10], max_len=joeynmt.max_output_length, topk=1)
    assert all("@@" not in t.translation for t in tr)
    want = imported.tgt_tok.detokenize(imported.tgt_tok.subword.decode(  # type: ignore[union-attr]
        [t for t in tr[0].target_tokens if t != "</s>"]))
    assert tr[0].translation == want


@pytest.mark.parametrize(("old", "new", "match"), [
    ('tokenizer_type: "subword-nmt"', 'tokenizer_type: "sentencepiece"', "tokenizer_type 'sentencepiece'"),
    ('separator: "@@"', 'separator: "@@"\n            sampling: 1', "tokenizer_cfg.sampling: an option"),
])
def test_unmapped_bpe_options_are_refused(tmp_path: Path, old: str, new: str, match: str) -> None:
    import shutil

    model = tmp_path / "model"
    shutil.copytree(MODEL, model)
    cfg = (model / "config.yaml").read_text(encoding="utf-8")
    assert old in cfg
    (model / "config.yaml").write_text(cfg.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(joeynmt.Refused, match=match):
        joeynmt.convert(model)


def test_missing_or_bad_codes_are_refused(tmp_path: Path) -> None:
    import shutil

    model = tmp_path / "model"
    shutil.copytree(MODEL, model)
    (model / "bpe.codes").write_text("#version: 0.2\na b c\n", encoding="utf-8")
    with pytest.raises(joeynmt.Refused, match=r"bpe\.codes: its BPE codes' merge 1 is not two symbols"):
        joeynmt.convert(model)
    (model / "bpe.codes").unlink()
    with pytest.raises(joeynmt.Refused, match=r"no bpe\.codes"):
        joeynmt.convert(model)


@pytest.mark.parametrize("sub", [{"kind": "bpe", "codes": "#version: 0.2\na b c\n"}, {"kind": "bpe", "codes": 7},
                                 {"kind": "wordpiece"}, "bpe"])
def test_a_bad_subword_record_in_a_sealed_file_is_one_line_not_an_exit(tmp_path: Path, sub: object) -> None:
    """subword-nmt would sys.exit on a bad codes line: a sealed file carrying one is refused, in one line."""
    ckpt = joeynmt.convert(MODEL)
    ckpt["meta"]["tokenisation"]["subword"] = sub
    checkpoint.atomic_save(ckpt, tmp_path / "bad.pt")  # sealed again, with the bad record
    with pytest.raises(checkpoint.CheckpointError, match=r"^bad\.pt does not hold a model this program can build: "
                                                         r"its (BPE codes|subword kind|tokenisation's subword)") as err:
        checkpoint.load(tmp_path / "bad.pt")
    assert "\n" not in str(err.value)
