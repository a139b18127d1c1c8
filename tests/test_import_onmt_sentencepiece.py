"""An OpenNMT-py model trained with its ``sentencepiece`` transform, imported, segments, translates and
scores as OpenNMT-py did (tests/fixtures/onmt/sentencepiece, made by the commands in ../README.md).

The app applies sentencepiece itself (:mod:`nmt.text.subword_sentencepiece`, the model's bytes recorded in
the checkpoint), so the pieces the stepper and the heatmaps show are the pieces OpenNMT-py read and wrote.
"""

from __future__ import annotations

import ast
import base64
import hashlib
from pathlib import Path

import pytest

from nmt.__main__ import main as nmt_main
from nmt.decoding import search as decoding
from nmt.models import checkpoint
from nmt.text import subword_sentencepiece as sp
from nmt.tools.importers import onmt

pytest.importorskip("sentencepiece")  # pinned in requirements.txt

FIX = Path(__file__).parent / "fixtures" / "onmt"
SP = FIX / "sentencepiece"
CKPT = SP / "model_step_1500.pt"


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> checkpoint.LoadedModel:
    """The fixture imported through the command line (spm.model found beside it), then loaded."""
    out = tmp_path_factory.mktemp("onmt-sp") / "onmt-sp.pt"
    assert nmt_main(["import", "onmt", str(CKPT), "--out", str(out)]) == 0
    return checkpoint.load(out)


def test_the_record_holds_the_model_itself(imported: checkpoint.LoadedModel) -> None:
    model = (SP / "spm.model").read_bytes()
    rec = imported.meta["tokenisation"]["subword"]
    assert rec == {"kind": "sentencepiece", "model_b64": base64.b64encode(model).decode("ascii"),
                   "sha256": hashlib.sha256(model).hexdigest()}
    assert imported.meta["imported"]["files_sha256"]["spm.model"] == hashlib.sha256(model).hexdigest()
    assert imported.meta["tokenisation"]["level"] == "subword"


def test_source_pieces_are_what_onmt_read(imported: checkpoint.LoadedModel) -> None:
    """Moses tokens, then sentencepiece: the pieces OpenNMT-py's transform made of test.en (test.pieces.en)."""
    for raw, pieces in zip(_lines(FIX / "test.raw.en"), _lines(SP / "test.pieces.en"), strict=True):
        assert imported.src_tok.tokenize(raw) == pieces.split(" ")


def test_greedy_pieces_equal_onmt_line_for_line(imported: checkpoint.LoadedModel) -> None:
    """All 100 lines: the pieces of onmt_translate's greedy output, and its words once they are decoded
    (onmt.test: onmt_translate with the transform, which decodes the pieces itself)."""
    traces = decoding.greedy(imported, _lines(FIX / "test.raw.en"), max_len=onmt.max_output_length, topk=1)
    theirs = [line.split("\t")[0] for line in _lines(SP / "onmt.pieces.test")]
    ours = [" ".join(t for t in tr.target_tokens if t != "</s>") for tr in traces]
    differ = [k for k, (a, b) in enumerate(zip(ours, theirs, strict=True)) if a != b]
    assert len(theirs) == 100 and not differ, f"{len(differ)} differ, first {differ[:1]}"
    words = [line.split("\t")[0] for line in _lines(SP / "onmt.test")]
    assert [" ".join(imported.tgt_tok.subword.decode(o.split(" "))) for o in ours] == words
    # the heatmap's rows and columns are these pieces: the source's with </s>, the output's as chosen
    assert traces[0].src_tokens == [*_lines(SP / "test.pieces.en")[0].split(" "), "</s>"]
    assert any(not t.startswith("▁") for tr in traces for t in tr.target_tokens[:-1])  # pieces inside words


def test_forced_log_probs_match_onmt_per_token(imported: checkpoint.LoadedModel) -> None:
    """OpenNMT-py's own per-token log p of its piece output (onmt_scores.py.txt), within 1e-4."""
    hyps = [line.split("\t")[0] for line in _lines(SP / "onmt.pieces.test")]
    scores = [ast.literal_eval(line) for line in _lines(SP / "onmt.pieces.test.scores")]
    traces = decoding.forced(imported, _lines(SP / "test.pieces.en"), hyps, pretokenized=True, topk=1)
    worst = max(abs(s.logprob - b) for tr, sc in zip(traces, scores, strict=True)
                for s, b in zip(tr.steps, sc, strict=True))
    assert worst <= 1e-4, worst


def test_detokenize_reads_pieces_back_into_text(imported: checkpoint.LoadedModel) -> None:
    """▁ marks a word's start: the first line's pieces (onmt.pieces.test) by hand, as words and as text."""
    pieces = "▁Un ▁homme ▁en ▁T - shirt ▁couvert ▁avec ▁des ▁t a m ar ▁.".split(" ")
    assert _lines(SP / "onmt.pieces.test")[0].split("\t")[0].split(" ") == pieces
    assert imported.tgt_tok.subword.decode(pieces) == "Un homme en T-shirt couvert avec des tamar .".split(" ")
    assert imported.tgt_tok.detokenize(pieces) == "Un homme en T-shirt couvert avec des tamar."


def test_record_whose_bytes_changed_is_refused() -> None:
    rec = sp.record((SP / "spm.model").read_bytes())
    assert sp.from_record(rec).sha256 == rec["sha256"]
    bad = {**rec, "model_b64": base64.b64encode(b"x" + (SP / "spm.model").read_bytes()).decode("ascii")}
    with pytest.raises(ValueError, match="does not match the SHA-256"):
        sp.from_record(bad)
    with pytest.raises(ValueError, match="not a sentencepiece record"):
        sp.from_record({**rec, "kind": "bpe"})
    junk = b"not a model"
    with pytest.raises(ValueError, match="not a sentencepiece model"):
        sp.from_record({"kind": "sentencepiece", "model_b64": base64.b64encode(junk).decode("ascii"),
                        "sha256": hashlib.sha256(junk).hexdigest()})


def test_missing_sentencepiece_model_is_refused_in_one_line(tmp_path: Path) -> None:
    lonely = tmp_path / "model_step_1500.pt"
    lonely.write_bytes(CKPT.read_bytes())
    with pytest.raises(onmt.Refused, match=r"its model \['spm\.model'\] is not beside .*--spm FILE") as err:
        onmt.convert(lonely, "en", "fr")
    assert "\n" not in str(err.value)
    ckpt = onmt.convert(lonely, "en", "fr", spm=SP / "spm.model")  # given on the command line
    digest = hashlib.sha256((SP / "spm.model").read_bytes()).hexdigest()
    assert ckpt["meta"]["tokenisation"]["subword"]["sha256"] == digest
