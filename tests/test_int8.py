"""int8 storage of embedding and output matrices (issue 20): values by hand, bound s/2, digest, loading."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from nmt.models import checkpoint
from nmt.models.luong import LuongConfig
from nmt.models.quantize import SCALE_SUFFIX, dequantize_rows, quantize_rows, vocabulary_matrices
from nmt.models.registry import build_model
from nmt.models.rnnsearch import ModelConfig, RNNSearch
from nmt.text.vocab import Vocab

W = torch.tensor([[1.0, 0.3, -0.26], [0.0, 0.0, 0.0], [-0.5, 0.2, 0.1]])


def test_quantize_by_hand() -> None:
    q, s = quantize_rows(W)
    # s = max|row| / 127: 1/127, (zero row) 1, 0.5/127.  q = round(w / s):
    # row 0: 0.3·127 = 38.1 → 38, −0.26·127 = −33.02 → −33;  row 2: 0.2·254 = 50.8 → 51, 0.1·254 = 25.4 → 25.
    assert q.dtype == torch.int8
    assert q.tolist() == [[127, 38, -33], [0, 0, 0], [-127, 51, 25]]
    assert torch.allclose(s, torch.tensor([1 / 127, 1.0, 0.5 / 127]))
    d = dequantize_rows(q, s)
    assert d[0, 1].item() == pytest.approx(38 / 127)  # 0.29921…, 0.00079 from 0.3
    assert d[2, 1].item() == pytest.approx(51 * 0.5 / 127)
    assert d[1].tolist() == [0.0, 0.0, 0.0]


def test_round_trip_error_at_most_half_a_step() -> None:
    torch.manual_seed(0)
    w = torch.randn(50, 16) * torch.logspace(-3, 1, 50)[:, None]  # rows of very different ranges
    q, s = quantize_rows(w)
    step = w.abs().amax(dim=1) / 127  # the scale, computed here by hand
    err = (dequantize_rows(q, s) - w).abs().amax(dim=1)
    assert bool((err <= step / 2 * (1 + 1e-5)).all())
    assert bool((err > step / 100).any())  # it is a real rounding, not a copy


def _tiny(arch: str) -> tuple[torch.nn.Module, Vocab, Vocab]:
    torch.manual_seed(1)
    src = Vocab.build([[f"s{i}" for i in range(20)]], 100)
    tgt = Vocab.build([[f"t{i}" for i in range(30)]], 100)
    if arch == "luong":
        cfg = LuongConfig(len(src), len(tgt), 8, 12, "general", "global", 2, True, "lstm", 1, "bidirectional", 0.0)
        return build_model(cfg.to_dict()), src, tgt
    return RNNSearch(ModelConfig(len(src), len(tgt), 8, 12, 12, 8, 0.0, "attention")), src, tgt


def test_vocabulary_matrices_of_both_architectures() -> None:
    m, _, _ = _tiny("rnnsearch")
    w = m.state_dict()
    assert vocabulary_matrices(w, m.cfg.to_dict()) == ["decoder.W_o.weight", "decoder.embed.weight",
                                                       "encoder.embed.weight"]
    m, _, _ = _tiny("luong")
    assert vocabulary_matrices(m.state_dict(), m.cfg.to_dict()) == ["W_s.weight", "src_embed.weight",
                                                                    "tgt_embed.weight"]


@pytest.mark.parametrize("arch", ["rnnsearch", "luong"])
def test_int8_checkpoint_loads_within_bound(arch: str, tmp_path: Path) -> None:
    model, src, tgt = _tiny(arch)
    path = tmp_path / "q.pt"
    checkpoint.atomic_save(checkpoint.make_checkpoint(model, src, tgt, "en", "fr", {"x": 1}, int8=True), path)
    raw = torch.load(path, weights_only=True)
    names = vocabulary_matrices(model.state_dict(), model.cfg.to_dict())
    assert raw["meta"]["storage"]["int8"] == names and raw["meta"]["x"] == 1
    assert all(raw["model"][n].dtype == torch.int8 for n in names)
    assert raw["weights_sha256"] == checkpoint.weights_digest(raw["model"])  # digest of what is stored
    loaded = checkpoint.load(path).model.state_dict()
    for name, w in model.state_dict().items():
        bound = w.abs().amax(dim=1, keepdim=True) / 127 / 2 * (1 + 1e-5) if name in names else 0.0
        assert bool(((loaded[name] - w).abs() <= bound).all()), name


def test_digest_covers_int8_bytes_and_scales(tmp_path: Path) -> None:
    model, src, tgt = _tiny("rnnsearch")
    ckpt = checkpoint.make_checkpoint(model, src, tgt, "en", "fr", {}, int8=True)
    for key in ("decoder.W_o.weight", "decoder.W_o.weight" + SCALE_SUFFIX):
        bad = {**ckpt, "model": dict(ckpt["model"])}
        t = bad["model"][key].clone()
        t.view(-1)[3] += 1
        bad["model"][key] = t
        checkpoint.atomic_save(bad, tmp_path / "bad.pt")
        with pytest.raises(checkpoint.CheckpointError, match="damaged"):
            checkpoint.load(tmp_path / "bad.pt")


def test_int8_without_scales_is_refused() -> None:
    model, src, tgt = _tiny("rnnsearch")
    ckpt = checkpoint.make_checkpoint(model, src, tgt, "en", "fr", {}, int8=True)
    del ckpt["model"]["decoder.W_o.weight" + SCALE_SUFFIX]
    with pytest.raises(checkpoint.CheckpointError, match="without its"):
        checkpoint.model_from_checkpoint(ckpt)


def test_default_storage_unchanged() -> None:
    model, src, tgt = _tiny("rnnsearch")
    ckpt = checkpoint.make_checkpoint(model, src, tgt, "en", "fr", {}, half=True)
    assert "storage" not in ckpt["meta"] and not any(k.endswith(SCALE_SUFFIX) for k in ckpt["model"])
    assert all(v.dtype == torch.float16 for v in ckpt["model"].values())


def test_export_int8_also_and_records_the_change_against_fp16(tiny_run: Path, tmp_path: Path) -> None:
    """``--int8-also`` adds a matrix to the int8 ones; the fp16 BLEU recorded equals a plain fp16 export's."""
    from nmt.tools import export

    data = Path(__file__).parent / "fixtures" / "tiny"
    common = ["--run", str(tiny_run), "--data", str(data), "--splits", "val", "--beams", "1", "--device", "cpu"]
    res = tmp_path / "results.json"
    assert export.main([*common, "--name", "fp16", "--out", str(tmp_path / "fp16.pt"), "--results", str(res)]) == 0
    assert export.main([*common, "--name", "q", "--out", str(tmp_path / "q.pt"), "--results", str(res), "--int8",
                        "--int8-also", "decoder.C.weight"]) == 0
    raw = torch.load(tmp_path / "q.pt", weights_only=True)
    assert raw["meta"]["storage"]["int8"] == ["decoder.C.weight", "decoder.W_o.weight", "decoder.embed.weight",
                                              "encoder.embed.weight"]  # sorted: C before W_o
    assert raw["model"]["decoder.C.weight"].dtype == torch.int8 and raw["model"]["decoder.W.weight"].dtype != torch.int8
    models = json.loads(res.read_text())["models"]
    record = models["q"]["int8"]
    assert record["bleu_fp16"] == {"greedy": models["fp16"]["scores"]["val"]["greedy"]["bleu"]["score"]}
    assert record["bleu_int8"] == {"greedy": models["q"]["scores"]["val"]["greedy"]["bleu"]["score"]}
    assert record["bleu_change"] == {"greedy": round(record["bleu_int8"]["greedy"] - record["bleu_fp16"]["greedy"], 2)}
    with pytest.raises(SystemExit, match="not a 2-D weight matrix"):
        export.main([*common, "--name", "x", "--out", str(tmp_path / "x.pt"), "--results", str(res), "--int8",
                     "--int8-also", "decoder.W.bias"])
