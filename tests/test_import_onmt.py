"""An OpenNMT-py model imported by ``python -m nmt import onmt`` translates exactly as OpenNMT-py did.

The fixture (tests/fixtures/onmt, made by the commands in its README.md) is a tiny LSTM with general
attention and input feeding trained by OpenNMT-py 3.5.1 itself on Multi30k en→fr, ``onmt_translate``'s
own greedy output with its sentence scores on 100 test sentences, and OpenNMT-py's own per-token
log-probabilities of those outputs. OpenNMT-py is not needed here.
"""

from __future__ import annotations

import argparse
import ast
import functools
import math
from pathlib import Path

import pytest
import torch

from nmt.__main__ import main as nmt_main
from nmt.decoding import search as decoding
from nmt.models import checkpoint
from nmt.models.checkpoint import CheckpointError
from nmt.tools.importers import onmt
from tests import hostile_checkpoints as hc

FIX = Path(__file__).parent / "fixtures" / "onmt"
CKPT = FIX / "model" / "model_step_1500.pt"


def _lines(name: str) -> list[str]:
    return (FIX / name).read_text(encoding="utf-8").splitlines()


def _translations(name: str) -> list[tuple[str, float]]:
    """onmt_translate's ``-with_score`` lines: the translation, a tab, its total log p."""
    return [(text, float(score)) for text, score in (line.split("\t") for line in _lines(name))]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> checkpoint.LoadedModel:
    """The fixture imported through the command line, then loaded as any checkpoint."""
    out = tmp_path_factory.mktemp("onmt") / "onmt-tiny.pt"
    assert nmt_main(["import", "onmt", str(CKPT), "--out", str(out)]) == 0
    return checkpoint.load(out)


def test_checkpoint_records_where_it_came_from(imported: checkpoint.LoadedModel) -> None:
    meta = imported.meta["imported"]
    assert meta["toolkit"] == "opennmt-py" and meta["version"].startswith("3.x")
    assert meta["files_sha256"] == {CKPT.name: onmt.sha256(CKPT)}
    assert imported.meta["source_config"]["global_attention"] == "general"
    assert imported.meta["source_config"]["_all_transform"] == []  # a set in the file, plain data here
    assert imported.meta["tokenisation"] == {"level": "word", "lowercase": False, "split": "moses",
                                             "onmt": "the line is split at spaces; no transform changes the text"}
    cfg = imported.model.cfg
    assert imported.verified and (cfg.cell, cfg.score, cfg.bridge, cfg.src_eos) == ("lstm", "general", "copy", False)


def test_tokenisation_is_what_onmt_read(imported: checkpoint.LoadedModel) -> None:
    """OpenNMT-py read test.en (this app's Moses tokens), split at spaces."""
    for raw, seen in zip(_lines("test.raw.en"), _lines("test.en"), strict=True):
        assert imported.src_tok.tokenize(raw) == seen.split(" ")


def test_greedy_equals_onmt_line_for_line(imported: checkpoint.LoadedModel) -> None:
    """All 100 lines equal onmt_translate's (beam 1, argmax, its default limit int(min(250, 1.25 S + 5))),
    and each line's total log p is onmt_translate's score (its ``-with_score``, length penalty none)."""
    traces = decoding.greedy(imported, _lines("test.raw.en"), max_len=onmt.max_output_length, topk=1)
    theirs = _translations("onmt.test")
    assert len(theirs) == 100
    ours = [" ".join(t for t in tr.target_tokens if t != "</s>") for tr in traces]
    differ = [k for k, (a, (b, _)) in enumerate(zip(ours, theirs, strict=True)) if a != b]
    assert not differ, f"{len(differ)} lines differ, first {differ[0]}: {ours[differ[0]]!r} vs {theirs[differ[0]][0]!r}"
    assert all(tr.target_tokens[-1] == "</s>" for tr in traces)  # none stopped by the limit: the test below is
    worst = max(abs(sum(s.logprob for s in tr.steps) - score) for tr, (_, score) in zip(traces, theirs, strict=True))
    assert worst <= 1e-3, worst  # a sentence total of up to ~40 float32 terms


def test_greedy_stops_where_onmt_length_limit_does(imported: checkpoint.LoadedModel) -> None:
    """``-max_length_ratio 0.5``: onmt_translate stopped most lines at int(0.5 S + 5) tokens; ours stop there too."""
    limit = functools.partial(onmt.max_output_length, ratio=0.5)
    traces = decoding.greedy(imported, _lines("test.raw.en"), max_len=limit, topk=1)
    theirs = [text for text, _ in _translations("onmt.ratio05.test")]
    assert [" ".join(t for t in tr.target_tokens if t != "</s>") for tr in traces] == theirs
    cut = sum(tr.target_tokens[-1] != "</s>" for tr in traces)
    assert 50 < cut < 100, cut  # most were cut, some ended: both sides of the limit are compared


def test_max_output_length_by_hand() -> None:
    """S = 9 source words (10 ids with our </s>): int(min(250, 9 · 1.25 + 5)) = int(16.25) = 16."""
    assert onmt.max_output_length(10) == 16
    assert onmt.max_output_length(10, ratio=0.5) == 9  # int(9.5)
    assert onmt.max_output_length(400) == 250
    assert onmt.max_output_length(10, ratio=0) == 250


def test_forced_log_probs_match_onmt_per_token(imported: checkpoint.LoadedModel) -> None:
    """Forced decoding of onmt_translate's outputs gives OpenNMT-py's own per-token log p (onmt_scores.py.txt:
    its NMTModel.forward, generator and log_softmax) within 1e-4 on every token, </s> included."""
    hyps = [text for text, _ in _translations("onmt.test")]
    scores = [ast.literal_eval(line) for line in _lines("onmt.test.scores")]
    traces = decoding.forced(imported, _lines("test.en"), hyps, pretokenized=True, topk=1)
    worst, n = 0.0, 0
    for tr, theirs in zip(traces, scores, strict=True):
        ours = [s.logprob for s in tr.steps]
        assert len(ours) == len(theirs)
        worst = max(worst, *(abs(a - b) for a, b in zip(ours, theirs, strict=True)))
        n += len(ours)
    assert worst <= 1e-4 and n > 1000, (worst, n)


def _save_opt(tmp_path: Path, **changes: object) -> Path:
    """The fixture checkpoint with options changed (or, for a value of None, removed), saved anew."""
    with torch.serialization.safe_globals([argparse.Namespace]):
        ck = torch.load(CKPT, weights_only=True)
    for key, value in changes.items():
        setattr(ck["opt"], key, value)
    path = tmp_path / "changed_step_1.pt"
    torch.save(ck, path)
    return path


@pytest.mark.parametrize(("changes", "match"), [
    ({"decoder_type": "transformer"}, r"opt\.decoder_type 'transformer'.*Transformers are not imported"),
    ({"encoder_type": "rnn"}, r"opt\.encoder_type 'rnn': only the bidirectional"),
    ({"coverage_attn": True}, r"opt\.coverage_attn True: coverage attention"),
    ({"context_gate": "both"}, r"opt\.context_gate 'both'"),
    ({"copy_attn": True}, r"opt\.copy_attn True: copy attention"),
    ({"global_attention_function": "sparsemax"}, r"sparsemax is not"),
    ({"rnn_type": "SRU"}, r"opt\.rnn_type 'SRU'"),
    ({"dec_hid_size": 48}, r"hidden_size 64 \(encoder\) vs 48"),
    ({"transforms": ["bpe"]}, r"transform 'bpe'"),
    ({"brand_new_option": 1}, r"opt\.brand_new_option: an option OpenNMT-py 3\.5\.1 does not have"),
])
def test_unmapped_options_are_refused_in_one_line(tmp_path: Path, changes: dict, match: str) -> None:
    with pytest.raises(onmt.Refused, match=match) as err:
        onmt.convert(_save_opt(tmp_path, **changes), "en", "fr")
    assert "\n" not in str(err.value)


def test_unknown_weight_and_wrong_shape_are_refused(tmp_path: Path) -> None:
    with torch.serialization.safe_globals([argparse.Namespace]):
        ck = torch.load(CKPT, weights_only=True)
    ck["model"]["decoder.attn.linear_cover.weight"] = torch.zeros(64, 1)
    torch.save(ck, tmp_path / "a.pt")
    with pytest.raises(onmt.Refused, match=r"unknown weight 'decoder\.attn\.linear_cover\.weight'"):
        onmt.convert(tmp_path / "a.pt", "en", "fr")
    del ck["model"]["decoder.attn.linear_cover.weight"]
    ck["model"]["decoder.attn.linear_in.weight"] = torch.zeros(64, 32)
    torch.save(ck, tmp_path / "b.pt")
    with pytest.raises(onmt.Refused, match=r"do not fit the sizes in opt"):
        onmt.convert(tmp_path / "b.pt", "en", "fr")


def test_pickled_callable_is_refused_without_running_it(tmp_path: Path) -> None:
    """Only argparse.Namespace is allowed beside tensors: a pickled callable is refused, never called."""
    with torch.serialization.safe_globals([argparse.Namespace]):
        ck = torch.load(CKPT, weights_only=True)
    marker = tmp_path / "ran"
    ck["opt"].hook = hc.Bomb(marker)
    torch.save(ck, tmp_path / "bomb_step_1.pt")
    assert not marker.exists()
    with pytest.raises(CheckpointError, match="only running code from the file could load"):
        onmt.convert(tmp_path / "bomb_step_1.pt", "en", "fr")
    assert not marker.exists()
    assert nmt_main(["import", "onmt", str(tmp_path / "bomb_step_1.pt"), "--out", str(tmp_path / "x.pt")]) == 2
    assert not marker.exists() and not (tmp_path / "x.pt").exists()


def test_namespace_is_allowed_only_for_the_import() -> None:
    """The allow-list is local to the importer's load: a plain weights_only load still refuses the file."""
    with pytest.raises(Exception, match=r"argparse\.Namespace"):
        torch.load(CKPT, weights_only=True)


def test_vocabulary_rows_swap_unk_and_pad(imported: checkpoint.LoadedModel) -> None:
    """OpenNMT-py's <unk> (0) and <blank> (1) are our <unk> (1) and <pad> (0); its row 0 is our row 1."""
    with torch.serialization.safe_globals([argparse.Namespace]):
        ck = torch.load(CKPT, weights_only=True)
    assert imported.tgt_vocab.itos[:4] == ["<pad>", "<unk>", "<s>", "</s>"]
    assert imported.tgt_vocab.itos[4:] == ck["vocab"]["tgt"][4:]
    w = imported.model.W_s.weight
    assert torch.equal(w[1], ck["generator"]["weight"][0]) and torch.equal(w[0], ck["generator"]["weight"][1])
    assert math.isclose(float(imported.model.W_s.bias[1].detach()), float(ck["generator"]["bias"][0]))


VARIANTS = sorted(p.name for p in (FIX / "variants").iterdir() if p.is_dir())


def test_variants_cover_every_mapped_option() -> None:
    """GRU and LSTM, 1 and 2 layers, dot / general / mlp, input feeding off, OpenNMT-py's bridge."""
    cfgs = [onmt.build(onmt.read_checkpoint(FIX / "variants" / v / "model_step_0.pt"))[0].cfg for v in VARIANTS]
    assert {c.cell for c in cfgs} == {"gru", "lstm"} and {c.layers for c in cfgs} == {1, 2}
    assert {c.score for c in cfgs} == {"dot", "general", "concat"} and {c.bridge for c in cfgs} == {"copy", "onmt"}
    assert False in {c.input_feeding for c in cfgs} and {c.output_tanh for c in cfgs} == {True, False}


@pytest.mark.parametrize("name", VARIANTS)
def test_untrained_variants_equal_onmt(name: str, tmp_path: Path) -> None:
    """Untrained models built by OpenNMT-py's own builder (variants/make_variants.py.txt) give, once imported,
    onmt_translate's greedy tokens and OpenNMT-py's own per-token log p (within 1e-4) on 30 sentences."""
    folder = FIX / "variants" / name
    out = tmp_path / f"{name}.pt"
    checkpoint.atomic_save(onmt.convert(folder / "model_step_0.pt", "en", "fr"), out)
    lm = checkpoint.load(out)
    theirs = [(text.split(" "), float(score)) for text, score in
              (line.split("\t") for line in (folder / "onmt.test").read_text(encoding="utf-8").splitlines())]
    traces = decoding.greedy(lm, _lines("test.raw.en")[:30], max_len=onmt.max_output_length, topk=2)
    # untrained models are nearly uniform: a choice between words within 1e-4 nats of each other is a
    # near-tie that float rounding on another machine may settle either way, so tokens are compared up
    # to each line's first near-tie (the log p below cover every token)
    compared = 0
    for tr, (want, _) in zip(traces, theirs, strict=True):
        margins = [math.log(s.topk[0][1]) - math.log(s.topk[1][1]) for s in tr.steps]
        k = next((i for i, m in enumerate(margins) if m < 1e-4), len(margins))
        assert tr.target_tokens[:k] == [*want, "</s>"][:k]
        compared += k
    assert compared >= 0.5 * sum(len(w) for w, _ in theirs), compared
    scores = [ast.literal_eval(line) for line in (folder / "onmt.test.scores").read_text(encoding="utf-8").splitlines()]
    forced = decoding.forced(lm, _lines("test.en")[:30], [" ".join(w) for w, _ in theirs], pretokenized=True, topk=1)
    worst = max(abs(s.logprob - b) for tr, sc in zip(forced, scores, strict=True)
                for s, b in zip(tr.steps, sc, strict=True))
    assert worst <= 1e-4, worst


class _Halves:
    """A stand-in subword model: each word becomes ▁ + its first letter, then the rest (if any)."""

    def encode(self, words: list[str]) -> list[str]:
        return [p for w in words for p in ("▁" + w[0], w[1:]) if p]

    def decode(self, pieces: list[str]) -> list[str]:
        return "".join(pieces).replace("▁", " ").split()


def test_tokenizer_applies_a_subword_model_to_its_words() -> None:
    """Moses words first (« dog, » → « dog » « , »), then pieces; pieces back to words, then Moses detokenising."""
    from nmt.text.tokenize import Tokenizer

    tok = Tokenizer("en", subword=_Halves())
    assert tok.tokenize("A dog, running.") == ["▁A", "▁d", "og", "▁,", "▁r", "unning", "▁."]
    assert tok.detokenize(["▁A", "▁d", "og", "▁,", "▁r", "unning", "▁."]) == "A dog, running."


def test_a_subword_record_of_another_kind_is_refused() -> None:
    ckpt = {"src_lang": "en", "tgt_lang": "fr", "src_vocab": ["a"], "tgt_vocab": ["b"],
            "meta": {"tokenisation": {"subword": {"kind": "wordpiece"}}}}
    with pytest.raises(ValueError, match="its subword kind 'wordpiece' is not one of"):
        checkpoint.tokenizers(ckpt)


def test_separate_sentencepiece_models_are_refused(tmp_path: Path) -> None:
    """The record holds one model for both sides: a target model other than the source's is refused."""
    sp = FIX / "sentencepiece"
    with torch.serialization.safe_globals([argparse.Namespace]):
        ck = torch.load(sp / "model_step_1500.pt", weights_only=True)
    ck["opt"].tgt_subword_model = "fr.model"
    torch.save(ck, tmp_path / "model_step_1500.pt")
    (tmp_path / "spm.model").write_bytes((sp / "spm.model").read_bytes())
    (tmp_path / "fr.model").write_bytes(b"another model")
    with pytest.raises(onmt.Refused, match="different source and target models; one joint model is mapped"):
        onmt.convert(tmp_path / "model_step_1500.pt", "en", "fr")
