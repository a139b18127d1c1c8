"""A JoeyNMT model imported by ``python -m nmt import joeynmt`` translates exactly as JoeyNMT did.

The fixture (tests/fixtures/joeynmt, made by the commands in its README.md) is a tiny GRU with
Bahdanau attention trained by JoeyNMT 2.3.0 itself on Multi30k en→fr, and JoeyNMT's own greedy
output and per-token log-probabilities on 100 test sentences. JoeyNMT is not needed here.
"""

from __future__ import annotations

import ast
import math
import shutil
from pathlib import Path

import pytest
import torch

from nmt.__main__ import main as nmt_main
from nmt.decoding import search as decoding
from nmt.models import checkpoint
from nmt.models.checkpoint import CheckpointError
from nmt.tools.importers import joeynmt
from nmt.tools.importers.yaml_subset import loads
from tests import hostile_checkpoints as hc

FIX = Path(__file__).parent / "fixtures" / "joeynmt"
MODEL = FIX / "model"


def _lines(name: str) -> list[str]:
    return (FIX / name).read_text(encoding="utf-8").splitlines()


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> checkpoint.LoadedModel:
    """The fixture imported through the command line, then loaded as any checkpoint."""
    out = tmp_path_factory.mktemp("joey") / "joey-tiny.pt"
    assert nmt_main(["import", "joeynmt", str(MODEL), "--out", str(out)]) == 0
    return checkpoint.load(out)


def test_checkpoint_records_where_it_came_from(imported: checkpoint.LoadedModel) -> None:
    meta = imported.meta["imported"]
    assert meta["toolkit"] == "joeynmt" and meta["version"] == "2.3.0"
    assert meta["files_sha256"]["best.ckpt"] == joeynmt.sha256(MODEL / "best.ckpt")
    assert set(meta["files_sha256"]) == {"config.yaml", "src_vocab.txt", "trg_vocab.txt", "best.ckpt"}
    assert imported.meta["tokenisation"]["lowercase"] is True
    assert imported.meta["source_config"]["model"]["decoder"]["attention"] == "bahdanau"
    assert imported.verified and imported.model.cfg.bridge == "learned" and imported.model.cfg.score == "concat"


def test_tokenisation_is_what_joeynmt_read(imported: checkpoint.LoadedModel) -> None:
    """JoeyNMT read test.en (this app's Moses tokens) lower-cased and split at spaces."""
    for raw, seen in zip(_lines("test.raw.en"), _lines("test.en"), strict=True):
        assert imported.src_tok.tokenize(raw) == seen.lower().split(" ")


def test_greedy_equals_joeynmt_line_for_line(imported: checkpoint.LoadedModel) -> None:
    """Every line's tokens, ``</s>`` included where JoeyNMT ended (not where its length limit stopped it)."""
    traces = decoding.greedy(imported, _lines("test.raw.en"), max_len=joeynmt.max_output_length, topk=1)
    theirs = [ast.literal_eval(line) for line in _lines("joeynmt.test.tokens")]
    assert len(theirs) == 100
    differ = [k for k, (tr, want) in enumerate(zip(traces, theirs, strict=True)) if tr.target_tokens != want]
    assert not differ, f"{len(differ)} lines differ, first {differ[0]}: {traces[differ[0]].target_tokens} vs " \
                       f"{theirs[differ[0]]}"
    text = [" ".join(t for t in tr.target_tokens if t != "</s>") for tr in traces]
    assert text == _lines("joeynmt.test")  # JoeyNMT's translation file: the same words, space-joined
    assert 0 < sum(want[-1] != "</s>" for want in theirs) < 20  # a few stopped by JoeyNMT's limit: it is tested


def test_forced_log_probs_match_joeynmt(imported: checkpoint.LoadedModel) -> None:
    """Forced decoding of JoeyNMT's hypotheses gives JoeyNMT's own per-token log p (≤ 1e-4)."""
    sources = [s.lower() for s in _lines("test.en")]
    hyps = _lines("joeynmt.test")
    scores = [ast.literal_eval(line) for line in _lines("joeynmt.test.scores")]
    traces = decoding.forced(imported, sources, hyps, pretokenized=True, topk=1)
    worst = 0.0
    for tr, theirs in zip(traces, scores, strict=True):
        ours = [s.logprob for s in tr.steps]
        assert len(ours) == len(theirs) or len(ours) == len(theirs) + 1  # + </s> when JoeyNMT hit its limit
        worst = max(worst, max(abs(a - b) for a, b in zip(ours, theirs, strict=False)))
    assert worst <= 1e-4, worst


def _copy_model(tmp_path: Path) -> Path:
    dst = tmp_path / "model"
    shutil.copytree(MODEL, dst)
    return dst


def test_transformer_is_refused_in_one_line(tmp_path: Path) -> None:
    model = _copy_model(tmp_path)
    cfg = (model / "config.yaml").read_text(encoding="utf-8")
    (model / "config.yaml").write_text(cfg.replace('type: "recurrent"', 'type: "transformer"'), encoding="utf-8")
    with pytest.raises(joeynmt.Refused, match=r"model\.encoder\.type 'transformer'.*Transformers") as err:
        joeynmt.convert(model)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(("old", "new", "match"), [
    ("init_hidden: \"bridge\"", "init_hidden: \"zero\"", "init_hidden 'zero'"),
    ("hidden_size: 64", "hidden_size: 48", "hidden_size 32 .encoder. vs 48"),
    ("level: \"word\"", "level: \"char\"", "level 'char'"),
    ("level: \"word\"", "level: \"bpe\"", "tokenizer_type 'sentencepiece'.*only subword-nmt BPE"),
    ("lowercase: True", "lowercase: True\n        pretokenizer_typo: 1", "pretokenizer_typo: an option"),
    ("lowercase: True", "lowercase: True\n        tokenizer_cfg:\n            pretokenizer: moses", "escapes HTML"),
    ("rnn_type: \"gru\"", "rnn_type: \"lstm\"", "rnn_type 'lstm' / 'gru'"),
])
def test_unmapped_options_are_refused(tmp_path: Path, old: str, new: str, match: str) -> None:
    model = _copy_model(tmp_path)
    cfg = (model / "config.yaml").read_text(encoding="utf-8")
    assert old in cfg
    (model / "config.yaml").write_text(cfg.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(joeynmt.Refused, match=match):
        joeynmt.convert(model)


def test_unknown_weight_is_refused(tmp_path: Path) -> None:
    model = _copy_model(tmp_path)
    ckpt = torch.load(model / "best.ckpt", weights_only=True)
    ckpt["model_state"]["decoder.coverage.weight"] = torch.zeros(2)
    torch.save(ckpt, model / "best.ckpt")
    with pytest.raises(joeynmt.Refused, match=r"unknown weight 'decoder\.coverage\.weight'"):
        joeynmt.convert(model)


def test_pickled_callable_is_refused_without_running_it(tmp_path: Path) -> None:
    model = _copy_model(tmp_path)
    marker = tmp_path / "ran"
    ckpt = torch.load(model / "best.ckpt", weights_only=True)
    ckpt["hook"] = hc.Bomb(marker)
    torch.save(ckpt, model / "best.ckpt")
    assert not marker.exists()
    with pytest.raises(CheckpointError, match="only running code from the file could load"):
        joeynmt.convert(model)
    assert not marker.exists()


def test_yaml_subset_refuses_what_it_does_not_read() -> None:
    assert loads("a:\n  b: [1, 2.5, x]\n  c: 'q # not a comment'  # a comment\nd:\n- 1\n- true\n") == {
        "a": {"b": [1, 2.5, "x"], "c": "q # not a comment"}, "d": [1, True]}
    for bad in ("a: &x 1\nb: *x\n", "a: {b: 1}\n", "a: |\n  text\n", "a: 1\na: 2\n", "- 1\n"):
        with pytest.raises(ValueError):
            loads(bad)


def test_unknown_toolkit_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert nmt_main(["import", "fairseq", "x", "--out", "y.pt"]) == 2
    assert capsys.readouterr().err.strip().count("\n") == 0


VARIANTS = sorted(p.name for p in (FIX / "variants").iterdir() if p.is_dir())


@pytest.mark.parametrize("name", VARIANTS)
def test_untrained_variants_equal_joeynmt(name: str, tmp_path: Path) -> None:
    """LSTMs, two layers, luong attention and input feeding off: untrained JoeyNMT models (made by
    variants/make_variants.py.txt with JoeyNMT's own initialisation and greedy search) give the same
    tokens and, within 1e-4, the same per-token log p once imported."""
    folder = FIX / "variants" / name
    out = tmp_path / f"{name}.pt"
    checkpoint.atomic_save(joeynmt.convert(folder / "model"), out)
    lm = checkpoint.load(out)
    raw = _lines("test.raw.en")[:30]
    theirs = [ast.literal_eval(line) for line in (folder / "joeynmt.tokens").read_text(encoding="utf-8").splitlines()]
    traces = decoding.greedy(lm, raw, max_len=joeynmt.max_output_length, topk=2)
    # untrained models are nearly uniform: a choice between words within 1e-4 nats of each other is a
    # near-tie that float rounding on another machine may settle either way, so tokens are compared up
    # to each line's first near-tie (the log p below cover every token)
    compared = 0
    for tr, want in zip(traces, theirs, strict=True):
        margins = [math.log(s.topk[0][1]) - math.log(s.topk[1][1]) for s in tr.steps]
        k = next((i for i, m in enumerate(margins) if m < 1e-4), len(margins))
        assert tr.target_tokens[:k] == want[:k]
        compared += k
    assert compared >= 0.5 * sum(map(len, theirs)), compared
    scores = [ast.literal_eval(line) for line in (folder / "joeynmt.scores").read_text(encoding="utf-8").splitlines()]
    hyps = [" ".join(w for w in t if w != "</s>") for t in theirs]
    forced = decoding.forced(lm, [s.lower() for s in _lines("test.en")[:30]], hyps, pretokenized=True, topk=1)
    worst = max(abs(s.logprob - b) for tr, sc in zip(forced, scores, strict=True) for s, b in zip(tr.steps, sc))
    assert worst <= 1e-4, worst


def test_split_spaces_reads_text_as_it_is(tmp_path: Path) -> None:
    """``--split spaces``: typed text is split at spaces (lower-cased, as the config says), not Moses-tokenised."""
    out = tmp_path / "spaces.pt"
    assert nmt_main(["import", "joeynmt", str(MODEL), "--out", str(out), "--split", "spaces"]) == 0
    lm = checkpoint.load(out)
    assert lm.meta["tokenisation"]["split"] == "spaces"
    assert lm.src_tok.tokenize("A dog, running.") == ["a", "dog,", "running."]
    assert lm.tgt_tok.detokenize(["un", "chien", "."]) == "un chien ."
