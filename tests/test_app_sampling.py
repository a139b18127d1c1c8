"""The stepper's Sample mode through AppTest: opened from a URL, one Step writes a drawn word whose p the page
shows under the model's distribution and under the transformed one, both checked against the model's own
step computed here (softmax of log p / T, the five most probable renormalised, by hand in torch).
"""

from __future__ import annotations

import re
from pathlib import Path

import torch

from nmt.decoding.search import Stepper
from tests.conftest import plain
from tests.stepper_app import SENTENCE, click, link, start, trace


def frame(at, column: str):
    """The first table on the page with ``column``."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


URL = {"text": SENTENCE, "mode": "sample", "temp": "0.7", "topk": "5", "seed": "3"}


def test_a_sample_link_steps_a_drawn_word_with_both_ps(ckpt_dir: Path, search_lm) -> None:
    at = start(URL)
    assert (at.radio(key="sp_mode").value, at.slider(key="sp_temp").value, at.number_input(key="sp_topk").value,
            at.slider(key="sp_topp").value, at.number_input(key="sp_seed").value) == ("sample", 0.7, 5, 1.0, 3)
    click(at, "sp_btn_step")
    step = trace(at).steps[0]
    assert step.sample is not None and (step.sample.temperature, step.sample.top_k, step.sample.seed) == (0.7, 5, 3)
    # the model's own first step, transformed by hand: T = 0.7, then the 5 most probable renormalised
    log_p = Stepper(search_lm, SENTENCE).peek().log_probs[0].double()
    p_t = torch.softmax(log_p / 0.7, -1)
    top = torch.topk(p_t, 5).indices
    assert step.token_id in top.tolist()
    want_raw, want_final = float(log_p[step.token_id].exp()), float(p_t[step.token_id] / p_t[top].sum())
    line = next(plain(c.value) for c in at.caption if c.value.startswith("Sampled"))
    raw, final = (float(x) for x in re.findall(r"p = ([0-9.]+)", line)[:2])
    assert (raw, final) == (round(want_raw, 3), round(want_final, 3)), line
    table = frame(at, "top-p off")
    drawn = table[table[""] == "◀ drawn"]
    assert list(drawn["word"]) == [step.token]
    assert float(drawn["model"].iloc[0]) == round(want_raw, 6)
    assert float(drawn["T = 0.7"].iloc[0]) == round(float(p_t[step.token_id]), 6)
    assert float(drawn["top-k 5"].iloc[0]) == float(drawn["top-p off"].iloc[0]) == round(want_final, 6)
    # Back and Step replay the same word; the link keeps the rule
    words = [step.token, *(click(at, "sp_btn_step") and trace(at).steps[-1].token for _ in range(2))]
    click(at, "sp_btn_back")
    click(at, "sp_btn_back")
    click(at, "sp_btn_step")
    click(at, "sp_btn_step")
    assert [s.token for s in trace(at).steps] == words
    shared = link(at)
    assert {k: shared[k] for k in ("sp_mode", "sp_temp", "sp_topk", "sp_seed")} == {
        "sp_mode": ["sample"], "sp_temp": ["0.7"], "sp_topk": ["5"], "sp_seed": ["3"]}


def test_the_translation_table_has_greedy_beam_and_samples(ckpt_dir: Path, search_lm) -> None:
    from nmt.decoding.search import beam_search, greedy

    at = start(URL)
    rows = frame(at, "decoding")
    assert list(rows["decoding"]) == ["greedy", "beam search, k = 5", "sample, seed 3", "sample, seed 4",
                                      "sample, seed 5"]
    assert rows["translation"].iloc[0] == greedy(search_lm, [SENTENCE])[0].translation
    assert rows["translation"].iloc[1] == beam_search(search_lm, [SENTENCE], beam=5)[0].translation
