"""The compare-attention page's model work: each chosen model's greedy decoding of the sentence and, with a
reference, its forced decoding (cached by :mod:`ui.common.widgets`, read from :mod:`nmt.decoding.search`), and
which of them attend in a local window."""

from __future__ import annotations

from typing import NamedTuple

from nmt.decoding.search import InputError
from nmt.decoding.trace import DecodeTrace
from ui.common import models
from ui.common import widgets as W


class Result(NamedTuple):
    """One model's decodings of the sentence."""

    label: str  # the model's label in the picker
    ckpt: models.CheckpointInfo
    own: DecodeTrace  # its greedy translation, with the top 5 words of each step
    forced: DecodeTrace | None  # the reference force-decoded, None without a reference


def decode_all(found: dict[str, models.CheckpointInfo], chosen: list[str], text: str,
               ref: str) -> list[Result] | None:
    """Every chosen model's decodings of ``text`` (and of ``ref`` where given); None, with the reason shown,
    where a model does not load or the sentence cannot be decoded."""
    results = []
    try:
        for label in chosen:
            ckpt = found[label]
            if W.load_lm(ckpt) is None:
                return None
            own = W.decode(W.job_for(ckpt, "greedy", topk=5), [text])[0]
            forced = W.decode(W.job_for(ckpt, "forced"), [text], [ref])[0] if ref else None
            results.append(Result(label, ckpt, own, forced))
    except InputError as err:
        W.input_error(err)
        return None
    return results


def local_windows(results: list[Result]) -> list[bool]:
    """For each model that attends in a window (Luong's local attention): whether its window is weighted by a
    Gaussian (local-p) rather than flat (local-m)."""
    return [models.load(r.ckpt).model.capabilities.gaussian_half_width() is not None for r in results
            if r.own.steps and r.own.steps[0].window is not None]
