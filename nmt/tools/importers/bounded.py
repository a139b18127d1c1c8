"""What the importers share beyond reading files (:mod:`nmt.tools.importers.files`): their refusal, and a model
built only after its weights' shapes were checked."""

from __future__ import annotations

import torch

from nmt.models.checkpoint import CheckpointError
from nmt.models.luong import LuongConfig, LuongNMT
from nmt.models.shapes import weight_shapes
from nmt.tools.importers.files import (  # noqa: F401  (re-exported: the importers read files through here)
    MAX_CHECKPOINT,
    MAX_CODES,
    MAX_CONFIG,
    MAX_VOCAB,
    FileRefused,
    check_file,
    open_bytes,
    read_bytes,
    read_text,
    read_vocab,
    short,
)


class Refused(CheckpointError, FileRefused):
    """A model an importer will not convert: one line (:class:`FileRefused`), and a :class:`CheckpointError`."""

    def __init__(self, message: str) -> None:
        FileRefused.__init__(self, message)


def load_checked(cfg: LuongConfig, weights: dict[str, torch.Tensor], refusal: Refused) -> LuongNMT:
    """A LuongNMT of ``cfg`` holding ``weights``, built only after every shape was compared on a model without
    storage (the meta device): sizes a hostile config names are never allocated. A misfit raises ``refusal``'s
    class with its message and the first misfit."""
    shapes = weight_shapes(lambda: LuongNMT(cfg, init=False))
    wrong = next((k for k in sorted(shapes) if k in weights and tuple(weights[k].shape) != shapes[k]), None)
    if wrong is not None:
        raise type(refusal)(f"{refusal}: {wrong} is {list(weights[wrong].shape)}, not {list(shapes[wrong])}")
    model = LuongNMT(cfg, init=False)
    try:
        model.load_state_dict(weights, strict=True)
    except RuntimeError as err:
        first = next((ln.strip() for ln in str(err).splitlines()[1:] if ln.strip()), str(err))
        raise type(refusal)(f"{refusal}: {first}") from None
    return model.eval()
