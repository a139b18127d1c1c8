"""Luong's Tables 4 and 6 (scripts/luong_tables.py): perplexity from forced steps, rows from a results file.

Expected values are worked out by hand from the steps' log-probabilities and the hand-made results entries.
"""

from __future__ import annotations

import math

import pytest

from scripts.luong_tables import perplexity, table_rows
from tests.traces import make_step, make_trace


def test_perplexity_is_exp_of_mean_nll_per_token_over_all_sentences() -> None:
    a, b = make_trace([[0.5, 0.5]] * 2), make_trace([[1.0, 0.0]])
    a.steps = [make_step(0, "x", None, logprob=-1.0), make_step(1, "</s>", None, logprob=-2.0)]
    b.steps = [make_step(0, "</s>", None, logprob=-3.0)]
    # (1 + 2 + 3) / 3 tokens = 2 nats per token → e² (not the mean of per-sentence perplexities, e^1.5 and e³)
    assert perplexity([a, b]) == {"ppl": pytest.approx(round(math.e ** 2, 3)), "tokens": 3}
    assert perplexity([a, b])["ppl"] == 7.389


def _model(attention: str, score: str, ppl: float | None, greedy: float, beam: float, aer: float | None) -> dict:
    m = {"config": {"attention": attention, "score": score, "input_feeding": True},
         "scores": {"test_2016_flickr": {"greedy": {"bleu": {"score": greedy}}, "beam5": {"bleu": {"score": beam}}},
                    "test_2017_flickr": {"greedy": {"bleu": {"score": 1.0}}, "beam5": {"bleu": {"score": 2.0}}}}}
    if ppl is not None:
        m["perplexity"] = {"test_2016_flickr": {"ppl": ppl, "tokens": 10}}
    if aer is not None:
        m["hansards_aer"] = {"argmax": {"aer": aer, "precision": 0.51234, "recall": 0.4, "links_predicted": 3}}
    return m


def test_table_rows_read_the_split_and_leave_out_models_without_aer() -> None:
    models = {"luong-global-dot": _model("global", "dot", 2.5, 50.1, 52.2, 0.55556),
              "luong-local-m": _model("local-m", "general", None, 48.0, 49.0, None)}
    t4, t6 = table_rows(models)
    assert t4 == [
        {"model": "luong-global-dot", "attention": "global", "score": "dot", "input_feeding": True, "ppl": 2.5,
         "bleu_greedy": 50.1, "bleu_beam5": 52.2},
        {"model": "luong-local-m", "attention": "local-m", "score": "general", "input_feeding": True, "ppl": None,
         "bleu_greedy": 48.0, "bleu_beam5": 49.0}]
    assert t6 == [{"model": "luong-global-dot", "attention": "global", "score": "dot", "input_feeding": True,
                   "aer": 0.5556, "precision": 0.5123, "recall": 0.4}]
    t4_2017, _ = table_rows(models, "test_2017_flickr")
    assert [(r["ppl"], r["bleu_greedy"], r["bleu_beam5"]) for r in t4_2017] == [(None, 1.0, 2.0), (None, 1.0, 2.0)]
