"""A checkpoint's config is checked on the meta device without drawing initial values there (nmt.models.shapes).

The draw on a meta tensor is what made every fresh process that loads a checkpoint import ``torch._dynamo``
(2.5 s or more of each command-line run and each worker); the shapes must still be the model's own.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import pytest
import torch
from torch.overrides import TorchFunctionMode

from nmt.models.luong import LuongConfig
from nmt.models.registry import build_model
from nmt.models.rnnsearch import ModelConfig
from nmt.models.shapes import weight_shapes

CONFIGS = {
    "rnnsearch": asdict(ModelConfig(src_vocab_size=11, tgt_vocab_size=13, emb_dim=4, hidden_dim=6, attn_dim=5,
                                    maxout_dim=3)),
    "luong-local-p": {**asdict(LuongConfig(src_vocab_size=11, tgt_vocab_size=13, emb_dim=4, hidden_dim=6,
                                           layers=2, attention="local-p")), "arch": "luong"},
}
DRAWS = {"normal_", "uniform_", "trunc_normal_", "kaiming_uniform_", "kaiming_normal_", "xavier_uniform_",
         "xavier_normal_", "orthogonal_"}


class Seen(TorchFunctionMode):
    """Names of the torch functions that reach torch (below the modes weight_shapes sets)."""

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        self.names.add(getattr(func, "__name__", ""))
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("name", list(CONFIGS))
def test_meta_shapes_are_the_built_models_and_nothing_is_drawn(name: str) -> None:
    cfg = CONFIGS[name]
    with Seen() as seen:
        shapes = weight_shapes(lambda: build_model(cfg, init=False))
    assert "empty" in seen.names  # the spy sees what weight_shapes lets through
    assert not seen.names & DRAWS, seen.names & DRAWS
    built = {k: tuple(v.shape) for k, v in build_model(cfg, init=False).state_dict().items()}  # on the CPU
    assert shapes == built and len(shapes) > 5


def test_draws_outside_the_meta_device_are_untouched() -> None:
    """Only draws into meta tensors are skipped: CPU tensors filled inside the same mode get the values that the
    same seed gives outside it."""
    from nmt.models import shapes as S

    def draw() -> list[torch.Tensor]:
        torch.manual_seed(0)
        return [torch.nn.init.normal_(torch.zeros(8)), torch.zeros(3).uniform_(5.0, 6.0)]

    want = draw()
    with S._NoDrawsOnMeta():
        got = draw()
    assert all(torch.equal(g, w) for g, w in zip(got, want, strict=True))
    assert want[0].abs().min() > 0 and want[1].min() >= 5.0
