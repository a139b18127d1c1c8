"""The weight shapes a model config asks for, found on the meta device: nothing allocated, nothing drawn.

A checkpoint's config is checked against its weights before a model is built (:func:`nmt.models.checkpoint.check_fits`,
:func:`nmt.tools.importers.bounded.load_checked`): a hostile config can name sizes that must never be allocated,
so the model is built on the meta device, which has shapes but no storage. Its layers still initialise
themselves there, and a random normal draw on a meta tensor runs through torch's Python reference
implementation, whose first call imports ``torch._dynamo`` (about 2.5 s of every fresh process that loads a
checkpoint: each command-line run, each worker). Initial values of tensors without storage mean nothing, so
:func:`weight_shapes` skips the draws on meta tensors instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

# The in-place random draws of torch.nn.init and of tensors (each returns the tensor it fills): on a meta
# tensor each is a no-op whose only effect would be the import above.
_INIT = torch.nn.init
_DRAWS = frozenset({torch.Tensor.normal_, torch.Tensor.uniform_, _INIT.normal_, _INIT.uniform_, _INIT.trunc_normal_,
                    _INIT.kaiming_uniform_, _INIT.kaiming_normal_, _INIT.xavier_uniform_, _INIT.xavier_normal_,
                    _INIT.orthogonal_})


class _NoDrawsOnMeta(TorchFunctionMode):
    """A torch function mode (this thread only) in which a random draw into a meta tensor returns it unchanged."""

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        if func in _DRAWS:
            target = args[0] if args else kwargs.get("tensor")  # torch.nn.init passes it by name
            if isinstance(target, torch.Tensor) and target.is_meta:
                return target
        return func(*args, **kwargs)


def on_meta(build: Callable[[], torch.nn.Module]) -> torch.nn.Module:
    """The module ``build()`` makes, built on the meta device (shapes, no storage, no draws): the frame of a model
    whose every weight is about to be loaded (``load_state_dict(..., assign=True)``), so that its layers' default
    initialisation (random draws over every matrix, about a third of loading a shipped model) is not computed
    only to be overwritten."""
    with torch.device("meta"), _NoDrawsOnMeta():
        return build()


def weight_shapes(build: Callable[[], torch.nn.Module]) -> dict[str, tuple[int, ...]]:
    """Name → shape of every entry of the state dict of the module ``build()`` makes, built on the meta device."""
    return {k: tuple(v.shape) for k, v in on_meta(build).state_dict().items()}
