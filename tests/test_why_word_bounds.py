""""Why this word?" held like every long job: in a heavy-job slot, its IG points through the model a bounded
number of rows at a time, no special token to contrast with, and no verdict from scores that do not add up.

On a tiny untrained RNNsearch (:mod:`tests.hostile_checkpoints`): the source "a dog runs ." is 5 tokens with
</s>, step 2 reads 3 decoder steps, so one Captum row is 3 · 5 = 15 units; a budget of 150 units is 10 rows
at a time (counted by hand, not by the code under test).
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from nmt.explanation import attribution
from nmt.explanation.contrastive import Contrast
from nmt.models import checkpoint
from nmt.text.vocab import SPECIALS
from tests import hostile_checkpoints as hc
from tests.conftest import plain
from ui.common import contrast_panel, heavy
from ui.figures import contrastive as cv

SRC, PREFIX, ALT = ["a", "dog", "runs", "."], [5, 6, 7], 4  # "un chien court" against "<unk>"-free id 4 ("un")


@pytest.fixture(scope="module")
def tiny() -> checkpoint.LoadedModel:
    return checkpoint.loaded_from(hc.tiny_checkpoint(), path="tiny-en-fr-rnnsearch.pt")


def test_ig_points_run_a_bounded_number_of_rows_at_a_time(tiny: checkpoint.LoadedModel,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    rows: list[int] = []
    forward = attribution.target_log_prob

    def counted(model, x, *rest):
        rows.append(x.shape[0])
        return forward(model, x, *rest)

    src_ids = tiny.src_vocab.encode(SRC)  # ends with </s>: 5 ids
    whole = attribution.attribute(tiny, src_ids, PREFIX, steps=[2], methods=("ig",), ig_steps=64, alternative=ALT)
    monkeypatch.setattr(attribution, "target_log_prob", counted)
    bounded = attribution.attribute(tiny, src_ids, PREFIX, steps=[2], methods=("ig",), ig_steps=64, alternative=ALT,
                                    grad_units=150)
    # the 64 points, 10 rows (150 units) at a time, and the completeness gap's F(x) and F(x') (a row each)
    assert sorted(rows) == [1, 1, 4, *[10] * 6]
    assert bounded.scores["ig"] == pytest.approx(whole.scores["ig"], abs=1e-6)
    assert bounded.ig_delta == pytest.approx(whole.ig_delta, abs=1e-6)


def test_the_explanation_runs_in_a_heavy_job_slot(tiny: checkpoint.LoadedModel,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """While the contrast is computed, the server's one slot is taken (a second job would queue)."""
    monkeypatch.setattr(heavy, "SLOTS", heavy.Slots(1))
    seen: list[int] = []
    real = contrast_panel.contrast

    def spied(*args, **kw):
        seen.append(heavy.SLOTS.running)
        return real(*args, **kw)

    monkeypatch.setattr(contrast_panel, "contrast", spied)
    heavy.store("stepper").clear()
    c = contrast_panel.explained(tiny, print, "tiny-slot-test", "None", (*SRC, "</s>"), tuple(PREFIX), ALT)
    assert isinstance(c, Contrast) and seen == [1] and heavy.SLOTS.running == 0


def test_special_tokens_are_neither_offered_nor_accepted(tiny: checkpoint.LoadedModel) -> None:
    assert cv.alternatives([("<unk>", 0.3), ("rouge", 0.2), ("<pad>", 0.1), ("</s>", 0.1), ("<s>", 0.1)],
                           "bleu") == ["rouge"]
    for word in (*SPECIALS, "<PAD>", " <s>".strip()):
        assert contrast_panel._word_id(tiny, word) is None, word
    assert contrast_panel._word_id(tiny, "chien") == 5 and contrast_panel._word_id(tiny, "Chien") == 5


def gapped() -> Contrast:
    """A result whose IG did not converge: a gap of 0.397 nats after 400 points (the issue's number)."""
    return Contrast(["the", "red", "car", "</s>"], 1, "rouge", "bleu", 2.0, -0.1, -2.1, [0.1, 0.7, 0.1, 0.1],
                    [0.1, 1.5, 0.6, 0.0], [0.1, 1.5, 0.6, 0.0], 0.397, 400,
                    shares={"state": 0.5, "previous word": 0.5, "context": 3.0})


def _show_gapped() -> None:
    from tests.test_why_word_bounds import gapped
    from ui.common.contrast_panel import show

    show(gapped(), "ex_")


def test_a_result_whose_gap_stays_over_the_tolerance_says_so_and_draws_no_verdict() -> None:
    assert not cv.converged(gapped())
    at = AppTest.from_function(_show_gapped, default_timeout=60).run()  # a loaded CI worker: not 3 s
    assert not at.exception
    assert [plain(w.value) for w in at.warning] == [
        "No verdict: the integrated gradients did not converge. After 400 points their sum still misses the "
        "difference by 0.397 nats (the tolerance is 0.05 nats), so the scores below do not account for why "
        "« rouge » and not « bleu »."]
    assert not any("mostly because" in m.value or " over « " in m.value for m in at.markdown)
