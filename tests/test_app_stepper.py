"""The stepper page through ``streamlit.testing.v1.AppTest``: every control, the URL round trip, bad input.

The app reads the tiny RNNsearch / RNNencdec pair of ``tiny_checkpoint_dir`` through the
``RNNSEARCH_CHECKPOINTS`` environment variable.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from nmt import checkpoint
from nmt.decoding import beam_search, greedy
from nmt.trace import DecodeTrace
from ui.presets import BY_NAME

APP = Path(__file__).resolve().parent.parent / "app.py"
SENTENCE = "A man is riding a bike."


@pytest.fixture
def ckpt_dir(tiny_checkpoint_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(tiny_checkpoint_dir))
    return tiny_checkpoint_dir


@pytest.fixture
def search_lm(ckpt_dir: Path) -> checkpoint.LoadedModel:
    return checkpoint.load(ckpt_dir / "tiny-en-fr-rnnsearch.pt")


def start(query: dict[str, str | list[str]] | None = None) -> AppTest:
    """A fresh session of the app (optionally opened from a URL's query parameters), run once."""
    at = AppTest.from_file(str(APP), default_timeout=60)
    if query:
        at.query_params.update(query)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def click(at: AppTest, key: str) -> AppTest:
    at.button(key=key).click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def set_text(at: AppTest, text: str) -> AppTest:
    at.text_area(key="w_text").set_value(text).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def trace(at: AppTest) -> DecodeTrace:
    """The trace the page shows (greedy: the session's stepper)."""
    return at.session_state["_stepper"][1].trace


def qp(at: AppTest, key: str) -> list[str]:
    """All values of a query parameter after the last run (AppTest gives str or list)."""
    v = at.query_params.get(key, [])
    return [v] if isinstance(v, str) else list(v)


def all_qp(at: AppTest) -> dict[str, list[str]]:
    return {k: qp(at, k) for k in at.query_params}


def html_bodies(at: AppTest) -> list[str]:
    return [h.proto.body for h in at.get("html")]


def chart_count(at: AppTest) -> int:
    return len(at.get("vega_lite_chart"))


def test_first_launch_shows_default_preset_and_writes_url(ckpt_dir: Path) -> None:
    at = start()
    assert at.title[0].value == "Step through decoding"
    assert at.text_area(key="w_text").value == BY_NAME["Reordered phrase"].text
    assert at.selectbox(key="w_preset").value == "Reordered phrase"
    assert at.selectbox(key="w_model").value == "tiny-en-fr"
    assert qp(at, "step") == ["0"]
    assert qp(at, "model") == ["tiny-en-fr"]
    assert {b.key for b in at.button} >= {"btn_reset", "btn_back", "btn_step", "btn_play", "btn_run"}
    assert at.button(key="btn_back").disabled
    assert "press Step" in " ".join(html_bodies(at))


def test_step_back_and_step_again_is_exact(ckpt_dir: Path) -> None:
    at = start({"text": SENTENCE})
    for n in range(1, 4):
        click(at, "btn_step")
        assert at.session_state["pos"] == n
        assert len(trace(at).steps) == n
    before = [(s.token, s.alpha, s.topk) for s in trace(at).steps]
    assert qp(at, "step") == ["3"]
    click(at, "btn_back")
    assert at.session_state["pos"] == 2 and len(trace(at).steps) == 2
    assert qp(at, "step") == ["2"]
    click(at, "btn_step")
    assert [(s.token, s.alpha, s.topk) for s in trace(at).steps] == before
    # the "now writing" panel: α table, Σα = 1.00, entropy, top-k buttons
    assert any(m.label == "Σ_j α_ij" and m.value == "1.00" for m in at.metric)
    assert any(m.label == "entropy of α_i" and m.value.endswith("nats") for m in at.metric)
    table = at.dataframe[0].value
    assert abs(table["α_ij"].sum() - 1.0) < 1e-4 and (table["most"] == "★").sum() == 1
    forces = [b for b in at.button if str(b.key).startswith("force_")]
    assert len(forces) == 5
    assert chart_count(at) == 1  # the α heatmap; the other tabs are built only when opened
    at.session_state["w_align_tab"] = "Energies e_ij"
    at.run()
    assert chart_count(at) == 1 and not at.exception  # now the energy heatmap alone
    spec = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    layers = [spec, *spec.get("layer", [])]
    assert any(lay.get("encoding", {}).get("color", {}).get("field") == "energy" for lay in layers)
    log = at.session_state["log"]
    assert any(e["who"] == "you" and e["what"] == "step" for e in log)
    assert any(e["who"] == "model" and e["what"].startswith("step 2: wrote") for e in log)


def test_run_to_end_matches_greedy_and_reset(ckpt_dir: Path, search_lm: checkpoint.LoadedModel) -> None:
    at = start({"text": SENTENCE})
    click(at, "btn_run")
    t = trace(at)
    ref = greedy(search_lm, [SENTENCE])[0]
    assert t.translation == ref.translation and t.finished
    assert at.button(key="btn_step").disabled and at.button(key="btn_run").disabled
    assert at.session_state["pos"] == len(ref.steps)
    assert len(at.get("download_button")) == 4
    click(at, "btn_reset")
    assert at.session_state["pos"] == 0 and at.session_state["plan"] == {}
    assert len(trace(at).steps) == 0


def test_play_advances_one_word_per_tick_and_stops_at_the_end(ckpt_dir: Path) -> None:
    at = start({"text": SENTENCE})
    click(at, "btn_play")
    assert at.session_state["playing"] and at.session_state["pos"] == 1
    assert at.button(key="btn_play").label == "Pause"
    at.run()  # a timer tick reruns the fragment: one more word
    assert at.session_state["pos"] == 2
    for _ in range(30):
        if not at.session_state["playing"]:
            break
        at.run()
    assert not at.session_state["playing"]
    assert trace(at).finished
    assert at.button(key="btn_play").label == "Play"
    assert any("playback stopped" in e["what"] for e in at.session_state["log"])
    # pausing: play again from the start, then pause
    click(at, "btn_reset")
    click(at, "btn_play")
    click(at, "btn_play")
    assert not at.session_state["playing"] and at.session_state["pos"] == 1


def test_toggle_shows_rnnencdec_without_a_heatmap(ckpt_dir: Path) -> None:
    at = start({"text": SENTENCE, "step": "3"})
    assert chart_count(at) == 1  # the α heatmap (other tabs are lazy)
    at.toggle(key="w_freeze").set_value(True).run()
    assert not at.exception
    t = trace(at)
    assert t.context == "fixed" and len(t.steps) == 3  # position kept for comparison
    assert all(s.alpha is None for s in t.steps)
    assert at.session_state["_stepper"][0][0].endswith("tiny-en-fr-rnnencdec.pt")
    infos = " ".join(i.value for i in at.info)
    assert "No alignment: every step reads the same summary vector" in infos
    charts = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    assert charts and all(c["mark"]["type"] == "line" for c in charts)  # ‖c_i‖ only: no heatmap
    assert qp(at, "freeze") == ["1"]
    assert any("froze c_i" in e["what"] for e in at.session_state["log"])
    # advanced: the freeze applied to the RNNsearch weights (untrained ablation)
    at.checkbox(key="w_ablation").check().run()
    assert at.session_state["_stepper"][0][0].endswith("tiny-en-fr-rnnsearch.pt")
    assert trace(at).context == "fixed"
    assert "Untrained ablation" in " ".join(i.value for i in at.info)
    assert qp(at, "ablation") == ["1"]
    at.toggle(key="w_freeze").set_value(False).run()
    assert trace(at).context == "attention" and chart_count(at) == 1


def test_presets_set_sentence_and_toggle(ckpt_dir: Path) -> None:
    at = start({"text": SENTENCE, "step": "2"})
    at.selectbox(key="w_preset").set_value("Fixed-vector bottleneck").run()
    assert at.text_area(key="w_text").value == BY_NAME["Fixed-vector bottleneck"].text
    assert at.toggle(key="w_freeze").value is True
    assert at.session_state["pos"] == 0
    assert any("Watch:" in c.value for c in at.caption)
    at.selectbox(key="w_preset").set_value("Long sentence").run()
    assert at.toggle(key="w_freeze").value is False
    set_text(at, "A dog runs.")
    assert at.selectbox(key="w_preset").value == "(your own sentence)"


def test_force_a_word_and_continue(ckpt_dir: Path, search_lm: checkpoint.LoadedModel) -> None:
    at = start({"text": SENTENCE})
    click(at, "btn_step")
    click(at, "btn_step")
    alternatives = [b for b in at.button if str(b.key).startswith("force_") and not b.disabled]
    target = alternatives[0]
    word = trace(at).steps[1].topk[int(str(target.key).rsplit("_", 1)[1])][0]
    target.click().run()
    assert not at.exception
    t = trace(at)
    assert len(t.steps) == 2 and t.steps[1].forced and t.steps[1].token == word
    assert at.session_state["plan"] == {1: word}
    assert qp(at, "force") == [f"1:{word}"]
    assert any(f"forced “{word}” at step 1" in e["what"] for e in at.session_state["log"])
    assert "forced" in html_bodies(at)[0]
    click(at, "btn_run")  # continue from the forced word
    t = trace(at)
    assert t.steps[1].forced and not any(s.forced for s in t.steps[2:])
    # back over the forced step and step again: the forced word is replayed exactly
    n = len(t.steps)
    for _ in range(n - 1):
        click(at, "btn_back")
    click(at, "btn_step")
    assert trace(at).steps[1].token == word and trace(at).steps[1].forced


def test_query_params_round_trip(ckpt_dir: Path) -> None:
    at = start({"text": SENTENCE})
    click(at, "btn_step")
    alternatives = [b for b in at.button if str(b.key).startswith("force_") and not b.disabled]
    alternatives[0].click().run()
    click(at, "btn_step")
    at.toggle(key="w_freeze").set_value(True).run()
    shared = all_qp(at)
    tokens = [(s.token, s.forced) for s in trace(at).steps]
    # a new session opened from that URL shows the same view
    other = start(shared)
    assert [(s.token, s.forced) for s in trace(other).steps] == tokens
    assert other.toggle(key="w_freeze").value is True
    assert other.text_area(key="w_text").value == SENTENCE
    assert all_qp(other) == shared
    code = other.code[0].value
    assert "step=2" in code and "freeze=1" in code


def test_beam_mode_walks_the_best_hypothesis(ckpt_dir: Path, search_lm: checkpoint.LoadedModel) -> None:
    at = start({"text": SENTENCE})
    at.radio(key="w_mode").set_value("beam").run()
    assert not at.exception
    click(at, "btn_step")
    click(at, "btn_run")
    beam_trace = at.session_state["_beam"][1]
    ref = beam_search(search_lm, [SENTENCE], beam=5)[0]
    assert beam_trace.translation == ref.translation
    assert at.session_state["pos"] == len(ref.steps)
    assert all(b.disabled for b in at.button if str(b.key).startswith("force_"))
    assert qp(at, "mode") == ["beam"]
    click(at, "btn_back")
    assert at.session_state["pos"] == len(ref.steps) - 1
    at.slider(key="w_beam").set_value(3).run()
    at.radio(key="w_mode").set_value("greedy").run()  # the beam slider is not drawn now
    click(at, "btn_back")
    at.radio(key="w_mode").set_value("beam").run()
    assert at.slider(key="w_beam").value == 3 and at.session_state["_beam"][1].beam_size == 3


@pytest.mark.parametrize("text", ["", "   \n\t "])
def test_empty_input_gives_a_message(ckpt_dir: Path, text: str) -> None:
    at = start({"text": SENTENCE})
    at.select_slider(key="w_speed").set_value(1.0).run()
    set_text(at, text)
    assert any("empty" in w.value for w in at.warning)
    assert not at.button and not at.select_slider  # no decoding controls without a sentence
    set_text(at, SENTENCE)
    click(at, "btn_play")
    assert at.session_state["playing"] and at.select_slider(key="w_speed").value == 1.0  # kept meanwhile


def test_long_input_is_truncated_with_a_notice(ckpt_dir: Path) -> None:
    at = start({"text": " ".join(["dog"] * 120)})
    assert any("first 80 tokens" in w.value and "120" in w.value for w in at.warning)
    click(at, "btn_step")
    assert len(trace(at).src_tokens) == 81  # 80 tokens and </s>


@pytest.mark.parametrize("text", [
    "A man 😀 is riding a bike 🚲.",
    "Ein Mann fährt Fahrrad. Мужчина едет. 男人骑自行车。",
    '<script>alert("x")</script> <img src=x onerror=alert(1)> **bold** $x$ :red[y]',
])
def test_odd_input_is_shown_as_text(ckpt_dir: Path, text: str) -> None:
    at = start({"text": text})
    click(at, "btn_step")
    assert any("outside the model's vocabulary" in i.value for i in at.info)
    bodies = " ".join(html_bodies(at))
    assert "<script" not in bodies and "<img" not in bodies
    if "<script" in text:
        assert "&lt;" in bodies and "&gt;" in bodies  # Moses splits "<script>" into "<", "script", ">"
        unk_note = next(i.value for i in at.info if "vocabulary" in i.value)
        assert "\\<" in unk_note and "\\$" in unk_note and "\\*" in unk_note  # markdown escaped: literal


def test_bad_query_params_fall_back(ckpt_dir: Path) -> None:
    at = start({"text": SENTENCE, "step": "abc", "mode": "nonsense", "model": "no-such-model",
                "beam": "999", "force": ["x:y", "3"]})
    assert at.session_state["pos"] == 0 and at.session_state["plan"] == {}
    assert at.radio(key="w_mode").value == "greedy"
    assert any("no" in w.value and "default" in w.value for w in at.sidebar.warning)
    at2 = start({"text": SENTENCE, "step": "500"})
    assert trace(at2).finished and at2.session_state["pos"] == len(trace(at2).steps)


def test_no_checkpoints_gives_training_instructions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(tmp_path))
    at = start()
    assert "No checkpoints found" in at.error[0].value
    assert any("train.py" in m.value for m in at.markdown)
