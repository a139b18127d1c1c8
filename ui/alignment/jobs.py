"""The alignment browser's model work: each pair's own translation and forced decoding of its reference,
computed once per server in a shared store (the table's facts), and the two traces of the pair shown.
The page file catches :class:`InputError` from here (a sentence the model cannot read).
"""

from __future__ import annotations

from typing import Any

from nmt.decoding.search import InputError
from nmt.decoding.trace import DecodeTrace
from nmt.text.tokenize import Tokenizer
from ui.alignment.pairs_panel import Pairs
from ui.common import models
from ui.common import widgets as W
from ui.figures.alignment import forced_facts, own_facts

__all__ = ["InputError", "forced_facts_of", "pair_traces", "table_facts", "words_to_translate"]


def forced_facts_of(job: W.Job, pairs: list[tuple[str, str]], label: str, heavy_job: bool = False
                    ) -> list[dict[str, Any]]:
    """log p(reference) and argmax-α links of each pair, computed once per server (progress on the first);
    ``heavy_job`` (the whole set, on a button): in the server's heavy-job slots."""
    return W.cached_items(W.shared_store("alignment"), [("forced", job, s, r) for s, r in pairs],
                          lambda part: [forced_facts(t) for t in W.decode_now(
                              job, [pairs[p][0] for p in part], [pairs[p][1] for p in part])], label,
                          heavy_job=heavy_job)


def words_to_translate(ckpt: models.CheckpointInfo, data: Pairs, idx: list[int]) -> int:
    """Source words of the pairs ``idx`` whose table facts no visitor has computed yet."""
    store, job = W.shared_store("alignment"), W.job_for(ckpt, "greedy")
    return sum(len(data.pairs[k][0].split()) for k in idx
               if ("own", job, *data.pairs[k], data.pretokenized) not in store)


def table_facts(ckpt: models.CheckpointInfo, data: Pairs, idx: list[int], tgt: str, heavy_job: bool = False
                ) -> tuple[list[dict], list[dict], W.Job, W.Job]:
    """The own-translation and forced-decoding facts of the pairs ``idx`` (shared by every session);
    ``heavy_job`` (on a button): in the server's heavy-job slots."""
    own_job, forced_job = W.job_for(ckpt, "greedy"), W.job_for(ckpt, "forced", pretokenized=data.pretokenized)
    pairs, tok = [data.pairs[k] for k in idx], Tokenizer(tgt)
    own = W.cached_items(
        W.shared_store("alignment"), [("own", own_job, s, r, data.pretokenized) for s, r in pairs],
        lambda part: [own_facts(t, pairs[p][1], data.pretokenized, tok)
                      for p, t in zip(part, W.decode_now(own_job, [pairs[p][0] for p in part]))],
        f"Translating {len(pairs)} sentences", heavy_job=heavy_job)
    forced = forced_facts_of(forced_job, pairs, "Force-decoding the references", heavy_job=heavy_job)
    return own, forced, own_job, forced_job


def pair_traces(own_job: W.Job, forced_job: W.Job, pair: tuple[str, str]) -> tuple[DecodeTrace, DecodeTrace]:
    """One pair's traces: the model's own translation of its source, and forced decoding of its reference."""
    s, r = pair
    return W.decode(own_job, [s])[0], W.decode(forced_job, [s], [r])[0]
