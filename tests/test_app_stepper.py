"""The stepper page through ``streamlit.testing.v1.AppTest``: every control, the URL round trip, bad input.

The app reads the tiny RNNsearch / RNNencdec pair of ``tiny_checkpoint_dir`` through the
``RNNSEARCH_CHECKPOINTS`` environment variable.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from nmt.decoding.search import beam_search, greedy
from nmt.models import checkpoint
from tests.stepper_app import (
    SENTENCE,
    body,
    chart_count,
    chart_rows,
    click,
    drawn,
    force_pills,
    html_bodies,
    link,
    open_tab,
    qp,
    set_text,
    specs,
    start,
    step_view,
    trace,
)
from ui.common.presets import BY_NAME


def test_first_launch_shows_default_preset_and_writes_url(ckpt_dir: Path) -> None:
    at = start()
    assert at.title[0].value == "Step through decoding"
    assert at.text_area(key="sp_text").value == BY_NAME["Adjective swap"].text
    assert at.selectbox(key="sp_w_preset").value == "Adjective swap"
    assert at.selectbox(key="sp_model").value == "tiny-en-fr"
    assert qp(at, "sp_step") == ["0"]
    assert link(at)["sp_model"] == ["tiny-en-fr"]
    assert {b.key for b in at.button} >= {"sp_btn_reset", "sp_btn_back", "sp_btn_step", "sp_btn_play", "sp_btn_run"}
    assert at.button(key="sp_btn_back").disabled
    assert "press Step" in " ".join(html_bodies(at))


def test_step_back_and_step_again_is_exact(ckpt_dir: Path) -> None:
    at = start({"text": SENTENCE})
    for n in range(1, 4):
        click(at, "sp_btn_step")
        assert at.session_state["sp_pos"] == n
        assert len(trace(at).steps) == n
    before = [(s.token, s.alpha, s.topk) for s in trace(at).steps]
    assert qp(at, "sp_step") == ["3"]
    click(at, "sp_btn_back")
    assert at.session_state["sp_pos"] == 2 and len(trace(at).steps) == 2
    assert qp(at, "sp_step") == ["2"]
    click(at, "sp_btn_step")
    assert [(s.token, s.alpha, s.topk) for s in trace(at).steps] == before
    # 3 words written: the line names the third (i = 2) as written and the fourth as the next
    assert "Written at i = 2 (word 3)" in " ".join(html_bodies(at))
    assert "Next: Step writes word 4 (i = 3)." in " ".join(html_bodies(at))
    # the "now writing" panel: α table, Σα = 1.00, entropy (its numbers from the trace's α), top-k pills
    stats, alpha = body(at, "step-stats"), trace(at).steps[2].alpha
    entropy = -sum(a * math.log(a) for a in alpha if a > 0)
    assert ">Σ_j α_ij<" in stats and ">1.00<" in stats and f">{entropy:.2f} nats<" in stats
    assert f"ln T_x = {math.log(len(alpha)):.2f} = spread evenly" in stats
    table = body(at, "step-table")  # the α / e table, with the stats in one snippet
    assert "step-stats" in table and table.count("★") == 1 and table.count("<tr>") == len(alpha) + 1
    assert [f"{a:.3f}</span>" in table for a in alpha] == [True] * len(alpha)  # every α_ij, to three decimals
    # the top-k list: every word with its p, the written one a marked chip; the 4 others the pills that force them
    step = trace(at).steps[2]
    written = step.token
    forces = force_pills(at)
    assert len(forces) == 1 and not forces[0].disabled
    assert [o.strip() for o in forces[0].options] == [w for w, _ in step.topk if w != written]
    assert all(o.startswith(" ") for o in forces[0].options)  # no emoji search per pill (ui.stepper.panels.pill_label)
    assert f"✓ {written}" in body(at, "written-candidate")
    assert [f"{p:.1%}</span>" in body(at, "topk-candidates") for _, p in step.topk] == [True] * 5
    assert chart_count(at) == 1  # the α heatmap; the tabs below are built only when opened
    open_tab(at, "Energies e_ij")
    assert chart_count(at) == 2  # the α heatmap and the energy heatmap
    colours = [spec["encoding"]["color"] for spec in specs(at)]
    assert [c["field"] for c in colours] == ["alpha", "energy"]
    assert colours[0]["scale"]["scheme"] == colours[1]["scale"]["scheme"] == "blues"  # one colour meaning
    log = at.session_state["sp_log"]
    assert any(e["who"] == "you" and e["what"] == "step" for e in log)
    assert any(e["who"] == "model" and e["what"].startswith("step 2: wrote") for e in log)


STEP_ELEMENTS = 38  # a Step's fragment drew 35 (bench/step-cost-cpu.json, elements_2026_11_29): 3 to spare


def test_a_step_draws_few_elements(ckpt_dir: Path) -> None:
    """Each element drawn costs the server ~0.4 ms a Step at 30 sessions (docs/recorded/step-cost.md): a Step
    redraws at most STEP_ELEMENTS (it drew 68 when every top-k row was a row of columns and the α / e numbers
    three metrics in columns), with the top-k, the α / e table and its numbers all there."""
    at = start({"text": SENTENCE})
    click(at, "sp_btn_step")
    click(at, "sp_btn_step")
    view = step_view(at)
    assert force_pills(at) and body(at, "step-table") and body(at, "step-stats") and body(at, "topk-candidates")
    assert drawn(view) <= STEP_ELEMENTS, drawn(view)


def test_run_to_end_matches_greedy_and_reset(ckpt_dir: Path, search_lm: checkpoint.LoadedModel) -> None:
    at = start({"text": SENTENCE})
    click(at, "sp_btn_run")
    t = trace(at)
    ref = greedy(search_lm, [SENTENCE])[0]
    assert t.translation == ref.translation and t.finished
    assert at.button(key="sp_btn_step").disabled and at.button(key="sp_btn_run").disabled
    assert at.session_state["sp_pos"] == len(ref.steps)
    assert len(at.get("download_button")) == 0  # in the "Share and export" tab, built when opened
    open_tab(at, "Share and export")
    assert len(at.get("download_button")) == 4
    # the event log counts the words written when each event happened: never the 1000 "run to end" asks for
    log = at.session_state["sp_log"]
    assert max(e["step"] for e in log) == len(ref.steps)
    assert next(e for e in log if e["what"] == "run to the end")["step"] == 0
    assert [e["step"] for e in log if e["who"] == "model" and e["what"].startswith("step ")] == \
        list(range(1, len(ref.steps) + 1))
    click(at, "sp_btn_reset")
    assert at.session_state["sp_pos"] == 0 and at.session_state["sp_plan"] == {}
    assert len(trace(at).steps) == 0


def test_play_advances_one_word_per_tick_and_stops_at_the_end(ckpt_dir: Path) -> None:
    at = start({"text": SENTENCE})
    at.select_slider(key="sp_w_speed").set_value(2.0).run()  # slow: a tick never falls a word behind the clock
    click(at, "sp_btn_play")
    assert at.session_state["sp_playing"] and at.session_state["sp_pos"] == 1
    assert at.button(key="sp_btn_play").label == "Pause"
    at.run()  # a timer tick reruns the fragment: one more word
    assert at.session_state["sp_pos"] == 2
    for _ in range(30):
        if not at.session_state["sp_playing"]:
            break
        at.run()
    assert not at.session_state["sp_playing"]
    assert trace(at).finished
    assert at.button(key="sp_btn_play").label == "Play"
    assert any("playback stopped" in e["what"] for e in at.session_state["sp_log"])
    # pausing: play again from the start, then pause
    click(at, "sp_btn_reset")
    click(at, "sp_btn_play")
    click(at, "sp_btn_play")
    assert not at.session_state["sp_playing"] and at.session_state["sp_pos"] == 1


def test_toggle_shows_rnnencdec_as_the_summary_band(ckpt_dir: Path) -> None:
    at = start({"text": SENTENCE, "step": "3"})
    assert chart_count(at) == 1  # the α heatmap (other tabs are lazy)
    at.toggle(key="sp_freeze").set_value(True).run()
    assert not at.exception
    t = trace(at)
    assert t.context == "fixed" and len(t.steps) == 3  # position kept for comparison
    assert all(s.alpha is None for s in t.steps)
    assert at.session_state["sp__stepper"][0][0].endswith("tiny-en-fr-rnnencdec.pt")
    infos = " ".join(i.value for i in at.info)
    assert "No alignment: every step reads the same summary vector" in infos
    # no α heatmap: the summary band in its place (three identical rows), then both translations and
    # how far c_i moves
    charts = specs(at)
    assert len(charts) == 2 and charts[0]["title"]["text"].startswith("Every word reads the same summary c")
    import pyarrow as pa

    proto = at.get("vega_lite_chart")[0].proto  # Streamlit sends the inline rows beside the spec
    band = pa.ipc.open_stream(proto.data.data).read_all().to_pylist()
    assert {c["i"] for c in band} == {0, 1, 2} and {c["reads"] for c in band} == {"the summary c"}
    assert [lay["mark"]["type"] for lay in charts[1]["layer"]] == ["line", "rule"]
    rows = [r for r in chart_rows(at, 1) if "model" in r]  # the line's rows (the rule has its own)
    fixed = [r["drift"] for r in rows if r["model"].startswith("RNNencdec")]
    moving = [r["drift"] for r in rows if r["model"].startswith("RNNsearch")]
    assert fixed and set(fixed) == {0.0} and max(moving) > 0  # the tiny model moves its c_i a little
    compare = body(at, "bottleneck-compare")
    assert "RNNsearch" in compare and "RNNencdec" in compare
    assert link(at)["sp_freeze"] == ["true"]
    open_tab(at, "This step's numbers")
    assert any("froze c_i" in e["what"] for e in at.session_state["sp_log"])
    # advanced: the freeze applied to the RNNsearch weights (untrained ablation)
    at.checkbox(key="sp_ablation").check().run()
    assert at.session_state["sp__stepper"][0][0].endswith("tiny-en-fr-rnnsearch.pt")
    assert trace(at).context == "fixed"
    assert "Untrained ablation" in " ".join(i.value for i in at.info)
    assert link(at)["sp_ablation"] == ["true"]
    at.toggle(key="sp_freeze").set_value(False).run()
    assert trace(at).context == "attention" and chart_count(at) == 1


def test_presets_set_sentence_and_toggle(ckpt_dir: Path) -> None:
    at = start({"text": SENTENCE, "step": "2"})
    at.selectbox(key="sp_w_preset").set_value("Bottleneck: lost details").run()
    assert at.text_area(key="sp_text").value == BY_NAME["Bottleneck: lost details"].text
    assert at.toggle(key="sp_freeze").value is True
    assert at.session_state["sp_pos"] == 0
    assert any("Watch:" in c.value for c in at.caption)
    at.selectbox(key="sp_w_preset").set_value("Long sentence").run()
    assert at.toggle(key="sp_freeze").value is False
    set_text(at, "A dog runs.")
    assert at.selectbox(key="sp_w_preset").value == "(your own sentence)"


def test_force_a_word_and_continue(ckpt_dir: Path, search_lm: checkpoint.LoadedModel) -> None:
    at = start({"text": SENTENCE})
    click(at, "sp_btn_step")
    click(at, "sp_btn_step")
    step = trace(at).steps[1]
    word = step.topk[2][0] if step.topk[2][0] != step.token else step.topk[3][0]  # the third candidate (or fourth)
    force_pills(at)[0].set_value(word).run()
    assert not at.exception
    t = trace(at)
    assert len(t.steps) == 2 and t.steps[1].forced and t.steps[1].token == word
    assert at.session_state["sp_plan"] == {1: word}
    assert qp(at, "sp_force") == [f"1:{word}"]
    assert any(f"forced “{word}” at step 1" in e["what"] for e in at.session_state["sp_log"])
    assert "forced" in body(at, "translation-so-far")
    click(at, "sp_btn_run")  # continue from the forced word
    t = trace(at)
    assert t.steps[1].forced and not any(s.forced for s in t.steps[2:])
    # back over the forced step and step again: the forced word is replayed exactly
    n = len(t.steps)
    for _ in range(n - 1):
        click(at, "sp_btn_back")
    click(at, "sp_btn_step")
    assert trace(at).steps[1].token == word and trace(at).steps[1].forced


def test_query_params_round_trip(ckpt_dir: Path) -> None:
    at = start({"text": SENTENCE})
    click(at, "sp_btn_step")
    pills = force_pills(at)[0]
    pills.set_value(pills.options[0].strip()).run()
    click(at, "sp_btn_step")
    at.toggle(key="sp_freeze").set_value(True).run()
    shared = link(at)
    assert shared["sp_step"] == qp(at, "sp_step") == ["2"] and shared["sp_force"] == qp(at, "sp_force")
    tokens = [(s.token, s.forced) for s in trace(at).steps]
    # a new session opened from that link shows the same view, and links to it the same way
    other = start(shared)
    assert [(s.token, s.forced) for s in trace(other).steps] == tokens
    assert other.toggle(key="sp_freeze").value is True
    assert other.text_area(key="sp_text").value == SENTENCE
    assert link(other) == shared
    assert shared["sp_freeze"] == ["true"] and shared["sp_text"] == [SENTENCE]


def test_beam_mode_walks_the_best_hypothesis(ckpt_dir: Path, search_lm: checkpoint.LoadedModel) -> None:
    at = start({"text": SENTENCE})
    at.radio(key="sp_mode").set_value("beam").run()
    assert not at.exception
    click(at, "sp_btn_step")
    click(at, "sp_btn_run")
    beam_trace = at.session_state["sp__beam"][1]
    ref = beam_search(search_lm, [SENTENCE], beam=5)[0]
    assert beam_trace.translation == ref.translation
    assert at.session_state["sp_pos"] == len(ref.steps)
    assert not force_pills(at) and "topk-candidates" in " ".join(html_bodies(at))  # no forcing in beam mode
    assert "End of the beam&#x27;s best hypothesis" in " ".join(html_bodies(at))
    assert link(at)["sp_mode"] == ["beam"]
    click(at, "sp_btn_back")
    assert at.session_state["sp_pos"] == len(ref.steps) - 1
    at.slider(key="sp_beam").set_value(3).run()
    at.radio(key="sp_mode").set_value("greedy").run()  # the beam slider is not drawn now
    click(at, "sp_btn_back")
    at.radio(key="sp_mode").set_value("beam").run()
    assert at.slider(key="sp_beam").value == 3 and at.session_state["sp__beam"][1].beam_size == 3


def test_presentation_mode_is_large_and_drops_the_secondary_panels(ckpt_dir: Path) -> None:
    at = start({"text": SENTENCE, "step": "3", "present": "1"})
    assert at.toggle(key="sp_present").value is True
    assert not at.tabs and not force_pills(at)  # no tabs, no top-k
    assert not any("target words written" in c.value for c in at.caption)
    assert "font-size:1.6rem" in body(at, "source-words") and "font-size:1.6rem" in body(at, "translation-so-far")
    heat = specs(at)[0]["encoding"]
    sizes = [heat[a]["axis"][k] for a in ("x", "y") for k in ("labelFontSize", "titleFontSize")]
    assert min([*sizes, heat["color"]["legend"]["labelFontSize"]]) >= 18
    at.toggle(key="sp_present").set_value(False).run()
    assert at.tabs and len(force_pills(at)[0].options) == 4
    assert "sp_present" not in link(at) and len(trace(at).steps) == 3
    assert any(e["what"] == "presentation mode off" for e in at.session_state["sp_log"])


def test_paper_style_heatmap(ckpt_dir: Path) -> None:
    at = start({"text": SENTENCE, "step": "2", "paper": "1"})
    scale = specs(at)[0]["encoding"]["color"]["scale"]
    assert scale["range"] == ["#000000", "#ffffff"] and scale["domain"] == [0.0, 1.0]
    assert "background:#000000" in body(at, "source-words") or "background:#ffffff" in body(at, "source-words")
    at.toggle(key="sp_paper").set_value(False).run()
    assert specs(at)[0]["encoding"]["color"]["scale"]["scheme"] == "blues"
    assert "sp_paper" not in link(at)


def test_unknown_word_is_copied_from_the_source(ckpt_dir: Path) -> None:
    """Force an out-of-vocabulary word: the model's <unk> is shown as the source word of largest α."""
    at = start({"text": SENTENCE, "force": "1:zzz-not-a-word", "step": "2"})
    t = trace(at)
    assert t.steps[1].token == "<unk>"
    alpha = t.steps[1].alpha[:-1]  # never </s>
    src = t.src_tokens[max(range(len(alpha)), key=alpha.__getitem__)]
    chip = body(at, "translation-so-far").split("<span")[2]
    assert chip.split('">', 1)[1].startswith(src) and "copied" in chip
    detok = body(at, "detokenised")  # under the chips, in their snippet
    assert "translation-so-far" in detok and ">Detokenised: " in detok and src in detok.split("Detokenised:")[1]
    at.toggle(key="sp_unk").set_value(False).run()
    chip = body(at, "translation-so-far").split("<span")[2]
    assert "copied" not in chip and "&lt;unk&gt;" in chip
    assert link(at)["sp_unk"] == ["false"]


def test_beam_search_runs_once_for_every_session(ckpt_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import streamlit as st

    from ui.common import heavy
    from ui.stepper import decoding as stepper_decoding

    calls: list[str] = []
    real = stepper_decoding.beam_search

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(str(args[1]))
        return real(*args, **kwargs)

    monkeypatch.setattr(stepper_decoding, "beam_search", counting)
    st.cache_data.clear()
    heavy.clear_all()  # the stepper's searches are kept in a byte-bounded store (ui/common/heavy.py)
    first = start({"text": SENTENCE, "mode": "beam", "beam": "4"})
    click(first, "sp_btn_step")
    click(first, "sp_btn_step")
    second = start({"text": SENTENCE, "mode": "beam", "beam": "4", "step": "1"})
    assert len(calls) == 1  # one search, stepped through by both sessions
    assert second.session_state["sp__beam"][1].translation == first.session_state["sp__beam"][1].translation
    start({"text": SENTENCE, "mode": "beam", "beam": "5"})
    assert len(calls) == 2  # another k is another search
