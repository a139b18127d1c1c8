"""The source side of decoding: a sentence tokenised for the encoder, and the limits on its length.

Bad input never crashes: an empty sentence raises :class:`InputError` with a clear message, and a
source longer than ``max_src_tokens`` (default :data:`MAX_SOURCE_TOKENS`) is truncated, with
``Source.truncated`` set, so callers can show a notice.
"""

from __future__ import annotations

from dataclasses import dataclass

from nmt.models import candidates as cand
from nmt.models.checkpoint import LoadedModel
from nmt.text.vocab import UNK_ID

MAX_SOURCE_TOKENS = 100


class InputError(ValueError):
    """A user-facing problem with the input sentence (message fit to show as is)."""


@dataclass
class Source:
    """A tokenised source sentence as the encoder sees it."""

    text: str
    tokens: list[str]  # without </s>
    ids: list[int]  # with </s>
    unk: list[bool]  # per token of tokens + </s>
    truncated: bool
    # its decoding candidate list (nmt.models.candidates): the allowed target ids and how they were made; None: all
    candidate_ids: list[int] | None = None
    candidates: cand.CandidateList | None = None


def prepare_source(
    lm: LoadedModel, text: str, max_src_tokens: int = MAX_SOURCE_TOKENS, pretokenized: bool = False,
    candidates: cand.CandidateSpec | None = None,
) -> Source:
    """Tokenise and look up a raw sentence; ``pretokenized`` splits on spaces only (keeps indices);
    ``candidates``: also build its candidate list from the model's dictionary (Jean et al. 2015 §3.2)."""
    if not isinstance(text, str) or not text.strip():
        raise InputError("The source sentence is empty: type a sentence to translate.")
    tokens = text.split() if pretokenized else lm.src_tok.tokenize(text)
    if not tokens:
        raise InputError("The source sentence has no words after tokenisation.")
    truncated = len(tokens) > max_src_tokens
    tokens = tokens[:max_src_tokens]
    ids = lm.src_vocab.encode(tokens)
    src = Source(text, tokens, ids, [i == UNK_ID for i in ids], truncated)
    if candidates is not None:
        src.candidate_ids, src.candidates = cand.build(tokens, lm.translations, lm.tgt_vocab, candidates)
    return src


def max_target_len(src_len: int) -> int:
    """Longest output allowed for a source of ``src_len`` tokens."""
    return min(2 * src_len + 10, 250)

