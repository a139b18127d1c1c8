"""train.py with issue 20's options: truecase models and the softmax over partition vocabularies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import train
from nmt.models import checkpoint
from nmt.text.data import read_parallel
from nmt.text.tokenize import Tokenizer
from nmt.text.truecase import Truecaser
from nmt.tools import export
from nmt.training import setup as training
from nmt.training.sampled_softmax import RestrictedLinear, install
from tests.conftest import TINY_ARGS, TINY_DATA


def test_truecased_sampled_softmax_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    widths: list[int] = []  # the output layer's number of logits at each call

    def spy_install(model: torch.nn.Module) -> RestrictedLinear:
        layer = install(model)
        forward = layer.forward
        layer.forward = lambda x: widths.append((y := forward(x)).shape[-1]) or y  # type: ignore[method-assign]
        return layer

    monkeypatch.setattr(training, "install", spy_install)  # build_run (nmt.training.setup) installs it
    src, tgt = read_parallel(TINY_DATA, "train", "en", "fr")
    for lang, lines in (("en", src), ("fr", tgt)):
        tc = Truecaser.train(Tokenizer(lang).tokenize(x) for x in lines)
        (tmp_path / f"tc.{lang}.json").write_text(json.dumps(tc.to_dict()), encoding="utf-8")
    out = tmp_path / "run"
    args = [a for a in TINY_ARGS]
    args[args.index("--epochs") + 1] = "12"
    args[args.index("--valid-every") + 1] = "10"  # greedy validation decodes with every word
    train.main([*args, "--truecase", str(tmp_path / "tc"), "--sampled-vocab", "25", "--out", str(out)])
    raw = torch.load(out / "best.pt", weights_only=True)
    assert set(raw["truecase"]) == {"src", "tgt"}
    lm = checkpoint.load(out / "best.pt")
    # "A" starts every sentence but "a" is the mid-sentence spelling: the model's vocabulary has no "A"
    assert lm.src_tok.tokenize("A man is riding a bike.")[:2] == ["a", "man"] and "A" not in lm.src_vocab
    assert lm.tgt_tok.detokenize(["un", "homme", "."]) == "Un homme."
    ordinary = {"decoder.W_o.weight", "decoder.W_o.bias"}
    assert ordinary <= set(raw["model"]) and not any("candidates" in k for k in raw["model"])
    n_tgt = len(lm.tgt_vocab)
    assert widths and all(w <= 25 for w in widths[:2])  # training: |V′| ≤ τ logits
    assert set(widths) - {n_tgt} and all(w <= 25 or w == n_tgt for w in widths)  # decoding: all words
    assert n_tgt in widths
    losses = [r["loss"] for r in map(json.loads, (out / "metrics.jsonl").read_text().splitlines())
              if r["type"] == "train"]
    assert len(losses) >= 2 and losses[-1] < losses[0] - 0.5  # it learns from the V′-only softmax
    # Shipping: nmt.tools.export keeps the truecasers and, with --int8, stores the vocabulary matrices as int8.
    shipped, results = tmp_path / "shipped.pt", tmp_path / "results.json"
    assert export.main(["--run", str(out), "--name", "tc", "--data", str(TINY_DATA), "--splits", "val", "--beams",
                        "1", "--out", str(shipped), "--results", str(results), "--int8", "--device", "cpu"]) == 0
    raw = torch.load(shipped, weights_only=True)
    assert raw["truecase"]["src"] == json.loads((tmp_path / "tc.en.json").read_text())
    assert raw["meta"]["storage"]["int8"] == ["decoder.W_o.weight", "decoder.embed.weight", "encoder.embed.weight"]
    assert raw["model"]["decoder.W_o.weight"].dtype == torch.int8
    assert checkpoint.load(shipped).src_tok.tokenize("A man.") == ["a", "man", "."]
