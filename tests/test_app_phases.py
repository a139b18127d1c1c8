"""The stepper's "Look · Generate · Update" tab through AppTest, on the shipped Multi30k checkpoints.

The tab's tables show the numbers the page's own trace recorded for the shown step (α per source word,
the softmax's top-k, ‖s_(i−1)‖), in each model's order, with one LaTeX block per equation; in beam
mode it replays the beam's best hypothesis without a mismatch warning.
"""

from __future__ import annotations

import pytest

from tests.stepper_app import click, open_tab, start
from ui.common import models

TAB = "Look · Generate · Update"
SENTENCE = "A little girl is climbing into a wooden playhouse."


@pytest.fixture(autouse=True)
def shipped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(models.ENV_VAR, raising=False)
    if not (models.ROOT / "checkpoints" / "m30k-en-fr-rnnsearch.pt").exists():
        pytest.skip("the shipped Multi30k checkpoints are not in checkpoints/")


def _frames(at) -> dict[str, object]:
    """The tab's data frames by their first column names (the page's other tables are not built)."""
    return {tuple(df.value.columns)[:2]: df.value for df in at.dataframe}


@pytest.mark.parametrize(("model", "first"), [("m30k-en-fr", "1 · Look"), ("m30k-en-fr-luong-global-general",
                                                                          "1 · Update")])
def test_tab_shows_the_traces_numbers_in_the_models_order(model: str, first: str) -> None:
    at = start({"text": SENTENCE, "model": model})
    for _ in range(3):
        click(at, "sp_btn_step")
    open_tab(at, TAB)
    rec = at.session_state["sp__stepper"][1].trace.steps[2]
    heads = [m.value for m in at.markdown if m.value.startswith("#### ")]
    assert heads[0] == f"#### {first}" and len(heads) == 3
    assert len(at.latex) == 3  # one block per phase
    frames = _frames(at)
    look = frames[("s", "source word") if "luong" in model else ("j", "source word")]
    for j, a in zip(look.iloc[:, 0], look.iloc[:, 3], strict=True):
        assert a == rec.alpha[int(j)]
    top = frames[("rank", "word")]
    assert list(zip(top["word"], top["p"], strict=True)) == rec.topk
    numbers = [df.value for df in at.dataframe if tuple(df.value.columns)[:2] == ("quantity", "value")]
    assert len(numbers) == 2  # Look's and Update's
    values = {q: v for df in numbers for q, v in zip(df["quantity"], df["value"], strict=True)}
    prev = "‖h_(t−1)‖" if "luong" in model else "‖s_(i−1)‖"
    assert values[prev] == pytest.approx(rec.state_norm, rel=1e-6)
    assert not at.warning


def test_beam_mode_replays_the_best_hypothesis_without_a_warning() -> None:
    at = start({"text": SENTENCE, "mode": "beam", "beam": "3"})
    for _ in range(4):
        click(at, "sp_btn_step")
    open_tab(at, TAB)
    assert next(m.value for m in at.markdown if m.value.startswith("#### ")) == "#### 1 · Look"
    full = at.session_state["sp__beam"][1]
    top = _frames(at)[("rank", "word")]
    assert list(top["word"]) == [w for w, _ in full.steps[3].topk]
    assert not at.warning
