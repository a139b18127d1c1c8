"""One decoding core: greedy, beam and forced decoding, and token-by-token stepping.

Every entry point returns :class:`nmt.decoding.trace.DecodeTrace` objects built by the same per-step
recorder, so a view can switch between them freely. Decoding is batched over sentences (and over
beams), with finished sentences dropped from the batch as they end.

Bad input never crashes: an empty sentence raises :class:`InputError` with a clear message, and a
source longer than ``max_src_tokens`` (default :data:`MAX_SOURCE_TOKENS`) is truncated, with
``trace.truncated`` set, so callers can show a notice.

The pieces live in one module per concept; this module holds the batched greedy and forced loop and
the command-line translation entry points, and re-exports the rest from where callers import it:

* :mod:`nmt.decoding.source` – :class:`Source`, :func:`prepare_source`, :class:`InputError`, the length limits;
* :mod:`nmt.decoding.recorder` – the per-step recorder (one batched step in, StepRecords out);
* :mod:`nmt.decoding.beam` – :func:`beam_search` and :func:`length_penalty`;
* :mod:`nmt.decoding.stepper` – :class:`Stepper`, one token at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from nmt.decoding.beam import LENGTH_NORMS, beam_search, length_penalty
from nmt.decoding.recorder import StepView, encode_sources, finish_trace, in_length_order, new_trace
from nmt.decoding.source import MAX_SOURCE_TOKENS, InputError, Source, max_target_len, prepare_source
from nmt.decoding.stepper import Stepper
from nmt.decoding.toolkit import masked, rules_of
from nmt.decoding.trace import DecodeTrace
from nmt.models.candidates import CandidateSpec
from nmt.models.checkpoint import LoadedModel
from nmt.models.rnnsearch import DecoderState
from nmt.text.vocab import BOS_ID, EOS_ID

__all__ = [
    "LENGTH_NORMS", "MAX_SOURCE_TOKENS", "InputError", "Source", "Stepper", "beam_search", "forced", "greedy",
    "length_penalty", "max_target_len", "prepare_source", "translate", "translate_traces",
]


# ----------------------------------------------------------------------------------------------
# Greedy and forced decoding share one batched loop
# ----------------------------------------------------------------------------------------------

Chooser = Callable[[int, torch.Tensor, list[int]], tuple[list[int], bool]]


def _run_batch(
    lm: LoadedModel, sources: Sequence[Source], traces: Sequence[DecodeTrace], context: str,
    choose: Chooser, limits: list[int], topk: int,
) -> None:
    """Decode a batch, appending a StepRecord per step to each trace until it ends."""
    enc = encode_sources(lm, sources)
    n = len(sources)
    state = lm.model.initial_state(enc, torch.full((n,), BOS_ID, dtype=torch.long, device=lm.device))
    rows = list(range(n))  # rows[r] = sentence index of batch row r
    i = 0
    while rows:
        out = lm.model.step(enc, state, context)
        chosen, forced = choose(i, out.log_probs, rows)
        view = StepView(out, state.s, topk)
        keep = []
        for r, b in enumerate(rows):
            traces[b].steps.append(view.record(lm, r, i, chosen[r], forced, len(sources[b].ids)))
            if chosen[r] != EOS_ID and i + 1 < limits[b]:
                keep.append(r)
        i += 1
        y = torch.tensor(chosen, dtype=torch.long, device=lm.device)
        state = DecoderState(out.state.s, y)
        if len(keep) < len(rows):
            sel = torch.tensor(keep, dtype=torch.long, device=lm.device)
            enc, state = enc.select(sel), state.select(sel)
            rows = [rows[r] for r in keep]


@torch.no_grad()
def greedy(
    lm: LoadedModel, sentences: Sequence[str], *, context: str | None = None, topk: int = 5,
    unk_replace: bool = False, batch_size: int = 64, max_src_tokens: int = MAX_SOURCE_TOKENS,
    candidates: CandidateSpec | None = None, max_len: Callable[[int], int] | None = None,
    toolkit_rules: bool = True,
) -> list[DecodeTrace]:
    """Greedy decoding: y_i = argmax p(y | y_<i, x) until ``</s>`` (over each sentence's candidate
    list with ``candidates``, :mod:`nmt.models.candidates`), at most ``max_len(source ids incl. </s>)`` steps.

    An imported model decodes by its toolkit's rules (:mod:`nmt.decoding.toolkit`: its length limit, the
    tokens it never writes, never ``</s>`` before its minimum length) unless ``toolkit_rules`` is False;
    ``max_len`` overrides the length limit either way (default: the rules' or :func:`max_target_len`)."""
    mode = context or lm.config.context
    rules = rules_of(lm) if toolkit_rules else None
    limit = max_len or (rules.max_len if rules else max_target_len)
    sources = [prepare_source(lm, s, max_src_tokens, candidates=candidates) for s in sentences]
    traces = [new_trace(lm, s, "greedy", mode) for s in sources]

    def argmax(i: int, log_probs: torch.Tensor, rows: list[int]) -> tuple[list[int], bool]:
        return (log_probs if rules is None else masked(lm, rules, log_probs, i)).argmax(-1).tolist(), False

    for idx in in_length_order(len(sources), [len(s.ids) for s in sources], batch_size):
        _run_batch(lm, [sources[b] for b in idx], [traces[b] for b in idx], mode, argmax,
                   [limit(len(sources[b].ids)) for b in idx], topk)
    return [finish_trace(lm, t, unk_replace) for t in traces]


@torch.no_grad()
def forced(
    lm: LoadedModel, sentences: Sequence[str], references: Sequence[str], *, context: str | None = None,
    topk: int = 5, batch_size: int = 64, pretokenized: bool = False,
    max_src_tokens: int = MAX_SOURCE_TOKENS,
) -> list[DecodeTrace]:
    """Forced decoding (teacher forcing) of reference translations, recording α for each word.

    With ``pretokenized`` both sides are split on spaces only, so token indices match external
    files such as gold alignments. The trace ends with the model's step for ``</s>``.
    """
    if len(sentences) != len(references):
        raise InputError(f"{len(sentences)} sources but {len(references)} references")
    mode = context or lm.config.context
    sources = [prepare_source(lm, s, max_src_tokens, pretokenized) for s in sentences]
    refs = []
    for r in references:
        toks = r.split() if pretokenized else lm.tgt_tok.tokenize(r)
        refs.append(lm.tgt_vocab.encode(toks))  # ends with </s>
    traces = [new_trace(lm, s, "forced", mode) for s in sources]

    for idx in in_length_order(len(sources), [len(s.ids) for s in sources], batch_size):
        batch_refs = [refs[b] for b in idx]

        def take_ref(
            i: int, log_probs: torch.Tensor, rows: list[int], refs_: list = batch_refs
        ) -> tuple[list[int], bool]:
            return [refs_[r][i] for r in rows], True

        _run_batch(lm, [sources[b] for b in idx], [traces[b] for b in idx], mode, take_ref,
                   [len(r) for r in batch_refs], topk)
    return [finish_trace(lm, t, unk_replace=False) for t in traces]


def translate(
    lm: LoadedModel, sentences: Sequence[str], *, beam: int = 1, unk_replace: bool = False,
    context: str | None = None, batch_size: int = 64, length_norm: str = "length",
    candidates: CandidateSpec | None = None, toolkit_rules: bool = True,
) -> list[str]:
    """Detokenised translations (greedy for ``beam`` 1); empty input lines give empty outputs. An imported model
    decodes by its toolkit's search rules unless ``toolkit_rules`` is False (:func:`translate_traces`)."""
    traces = translate_traces(lm, sentences, beam=beam, unk_replace=unk_replace, context=context,
                              batch_size=batch_size, length_norm=length_norm, candidates=candidates,
                              toolkit_rules=toolkit_rules)
    return ["" if t is None else t.translation for t in traces]


def translate_traces(
    lm: LoadedModel, sentences: Sequence[str], *, beam: int = 1, unk_replace: bool = False,
    context: str | None = None, batch_size: int = 64, length_norm: str = "length",
    max_src_tokens: int = MAX_SOURCE_TOKENS, candidates: CandidateSpec | None = None, toolkit_rules: bool = True,
) -> list[DecodeTrace | None]:
    """Lean traces (top-1 only, no beam record) of :func:`translate`; None for empty lines. An imported model
    decodes by its toolkit's rules, greedy and beam (:mod:`nmt.decoding.toolkit`), unless ``toolkit_rules`` is
    False (then ``length_norm`` and this app's limit apply to it as to any model)."""
    idx = [i for i, s in enumerate(sentences) if s.strip()]
    todo = [sentences[i] for i in idx]
    if beam <= 1:
        traces = greedy(lm, todo, context=context, unk_replace=unk_replace, batch_size=batch_size, topk=1,
                        max_src_tokens=max_src_tokens, candidates=candidates, toolkit_rules=toolkit_rules)
    else:
        traces = beam_search(lm, todo, beam=beam, context=context, unk_replace=unk_replace, topk=1,
                             record_beam=False, batch_size=max(1, batch_size // 2), length_norm=length_norm,
                             max_src_tokens=max_src_tokens, candidates=candidates, toolkit_rules=toolkit_rules)
    out: list[DecodeTrace | None] = [None] * len(sentences)
    for i, t in zip(idx, traces, strict=True):
        out[i] = t
    return out
