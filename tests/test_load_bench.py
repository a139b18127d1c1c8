"""bench/load.py without a server: its statistics, how it reads the page's messages, its JSON file."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import pytest
from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

_path = Path(__file__).resolve().parent.parent / "bench" / "load.py"
_spec = importlib.util.spec_from_file_location("bench_load", _path)
assert _spec is not None and _spec.loader is not None
load = sys.modules["bench_load"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(load)


def test_percentile_interpolates_between_order_statistics() -> None:
    # [1, 2, 3, 4]: p50 sits halfway between 2 and 3; p95 at rank 0.95 * 3 = 2.85, i.e. 3 + 0.85 * (4 - 3).
    assert load.percentile([4.0, 1.0, 3.0, 2.0], 50) == pytest.approx(2.5)
    assert load.percentile([4.0, 1.0, 3.0, 2.0], 95) == pytest.approx(3.85)
    assert load.percentile([1.0, 2.0, 3.0, 4.0], 0) == 1.0
    assert load.percentile([1.0, 2.0, 3.0, 4.0], 100) == 4.0
    assert load.percentile([7.0], 95) == 7.0
    assert math.isnan(load.percentile([], 50))


def test_summarize_reports_milliseconds() -> None:
    assert load.summarize([0.1, 0.2, 0.3, 0.4]) == {"n": 4, "p50_ms": 250.0, "p95_ms": 385.0, "max_ms": 400.0}
    assert load.summarize([])["n"] == 0


def _delta(fragment: str = "") -> ForwardMsg:
    msg = ForwardMsg()
    msg.delta.fragment_id = fragment
    return msg


def test_session_reads_buttons_progress_and_errors_from_deltas() -> None:
    s = load.Session(port=1, timeout=1)
    step = _delta("frag1")
    step.delta.new_element.button.id, step.delta.new_element.button.label = "$$ID-abc-btn_step", "Step"
    step.delta.new_element.button.disabled = True
    caption = _delta()
    caption.delta.new_element.markdown.body = "**3** target words written, at most 40 · RNNsearch"
    error = _delta()
    error.delta.new_element.alert.body, error.delta.new_element.alert.format = "Something went wrong", Alert.ERROR
    warning = _delta()
    warning.delta.new_element.alert.body, warning.delta.new_element.alert.format = "long sentence", Alert.WARNING
    for msg in (step, caption, error, warning):
        s._read_delta(msg)
    assert s.buttons == {"Step": ("$$ID-abc-btn_step", True, "frag1")}
    assert s.words == 3
    assert s.errors == ["st.error: Something went wrong"]


def test_save_replaces_only_a_run_with_the_same_settings(tmp_path: Path) -> None:
    out = tmp_path / "load.json"
    run = {"server_options": [], "server_env": {}, "think_s": 0.0, "period_s": 0.0, "steps_per_session": 10,
           "rounds": [1]}
    load.save(out, run)
    load.save(out, {**run, "server_options": ["runner.postScriptGC=false"]})
    load.save(out, {**run, "rounds": [2]})
    doc = json.loads(out.read_text())
    assert [(r["server_options"], r["rounds"]) for r in doc["runs"]] == [(["runner.postScriptGC=false"], [1]),
                                                                         ([], [2])]
    assert doc["machine"]["cores"] >= 1


def test_a_class_presses_on_its_own_clock() -> None:
    # open loop: every 2 s from the session's phase, whatever the server does
    assert load.press_times(10.0, 2.0, 4) == [10.0, 12.0, 14.0, 16.0]


def test_crossing_interpolates_the_rate_at_which_p95_passes_the_limit() -> None:
    # 15 steps/s at 400 ms, 20 at 1,600 ms: 1,000 ms is halfway, 17.5 steps/s
    assert load.crossing([(10.0, 120.0), (15.0, 400.0), (20.0, 1600.0), (25.0, 900.0)], 1000.0) == 17.5
    assert load.crossing([(15.0, 1200.0)], 1000.0) == 15.0  # over at the first rate tried
    assert load.crossing([(15.0, 400.0), (25.0, 999.0)], 1000.0) is None  # beyond the rates tried


def _round(n: int, p95: float, errors: int, after: float) -> dict:
    return {"sessions": n, "offered_steps_per_s": n / 2, "latency": {"p95_ms": p95}, "errors": errors,
            "rss_mib": {"after": after}}


def test_class_verdict_needs_p95_no_errors_and_memory_back() -> None:
    ok = load.verdict([_round(30, 300.0, 0, 504.0), _round(40, 700.0, 0, 500.0), _round(50, 1300.0, 0, 500.0)],
                      baseline_mib=480.0)  # 504 = 480 + 5 %
    assert ok["pass"] and ok["p95_1s_passed_at_steps_per_s"] == 22.5  # 20 + 5 · (1000 - 700) / (1300 - 700)
    assert not load.verdict([_round(30, 301.0, 0, 480.0)], 480.0)["pass"]
    assert not load.verdict([_round(30, 200.0, 1, 480.0)], 480.0)["pass"]
    bad = load.verdict([_round(30, 200.0, 0, 504.5)], 480.0)
    assert not bad["pass"] and not bad["rss_ok"] and bad["p95_1s_passed_at_steps_per_s"] is None
    assert load.verdict([_round(20, 200.0, 0, 480.0)], 480.0)["why"] == "no round of 30 sessions"
