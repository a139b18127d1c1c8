"""Server-side seconds of the stepper page's interactions, through Streamlit's AppTest (CPU).

    python bench/app_stepper.py --json bench/app-stepper-cpu.json

Uses the shipped checkpoints (``checkpoints/``, or ``$RNNSEARCH_CHECKPOINTS``). Every number is
the wall time of one AppTest run in this process, i.e. what the server spends on a click before the
browser gets its answer (the browser's own drawing is not included):

* ``first_view_s_cold``: a new session's first view in a fresh process (model load included);
  ``first_view_s_warm``: the same for later sessions (the model is loaded, as on a running server);
* ``greedy_step_s``: one "Step" click in greedy mode (the default preset);
* ``beam_switch_s_cold``: switching the mode to beam search with k = 12 on a 30-word sentence, the
  beam search itself included (``st.cache_data`` cleared first); ``beam_switch_s_warm``: the same
  switch in another session (the search is shared through ``st.cache_data``);
* ``beam_step_s``: one "Step" click walking the stored beam hypothesis;
* ``play_tick_s_greedy`` / ``play_tick_s_beam``: one timer tick of "Play" (a full AppTest run, more
  than the fragment rerun a browser asks for), which must stay well below the 0.25 s per word of
  the fastest play speed (``browser.play_025_words_per_s``: 4 would be keeping pace exactly).

``--browser`` adds the same interactions in headless Chromium (``/usr/bin/chromium`` through
Playwright, against ``streamlit run app.py`` on a free localhost port): seconds from the click to
the new words on screen (``browser.*``), i.e. the server's time plus the websocket and the
browser's own drawing of the page.

Medians over ``--repeats``, as wall seconds and as this process's CPU seconds (``*_cpu_s``: on a
shared, loaded machine the wall time also counts waiting for a core); the JSON also records
torch's thread count, the CPU and the load average when it ran. ``--threads``
overrides the app's own choice (``RNNSEARCH_THREADS``), to compare settings.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

# the stepper's buttons are named with their clicker key after the word ("Step →", "Play P")
STEP, PLAY = re.compile(r"^Step( |$)"), re.compile(r"^Play( |$)")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

APP = str(ROOT / "app.py")
TIMEOUT = 300
# 30 words (Moses tokens: 30 words and a full stop)
SENTENCE_30 = ("A young woman in a red jacket and a man with a black hat are walking their two dogs "
               "along the river next to a stone bridge in the park.")


CPU: list[float] = []  # process CPU seconds of every timed run, beside its wall time


def _median(xs: list[float]) -> float:
    return round(statistics.median(xs), 3)


def _timed(fn: Any) -> float:
    """Wall seconds of ``fn()``; its CPU seconds (all threads of this process) go to :data:`CPU`."""
    c0, t0 = time.process_time(), time.perf_counter()
    fn()
    dt = time.perf_counter() - t0
    CPU.append(time.process_time() - c0)
    return dt


def _cpu_since(n: int) -> float:
    """The median CPU seconds of the timed runs after the first ``n``."""
    return _median(CPU[n:])


def _session(query: dict[str, str] | None = None) -> tuple[Any, float]:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    if query:
        at.query_params.update(query)
    dt = _timed(at.run)
    assert not at.exception, [e.value for e in at.exception]
    return at, dt


def _click(at: Any, key: str) -> float:
    dt = _timed(lambda: at.button(key=key).click().run())
    assert not at.exception, [e.value for e in at.exception]
    return dt


def bench(repeats: int) -> dict[str, Any]:
    import streamlit as st
    import torch

    out: dict[str, Any] = {}
    _, out["first_view_s_cold"] = _session()
    out["first_view_s_cold"] = round(out["first_view_s_cold"], 3)
    out["first_view_s_warm"] = _median([_session()[1] for _ in range(repeats)])

    steps, cpu = [], []
    for _ in range(repeats):
        at, _ = _session()
        for _ in range(3):
            steps.append(_click(at, "sp_btn_step"))
            cpu.append(CPU[-1])
    out["greedy_step_s"] = _median(steps)
    out["greedy_step_cpu_s"] = _median(cpu)

    at, _ = _session({"sp_text": SENTENCE_30})
    _click(at, "btn_play")
    n = len(CPU)
    out["play_tick_s_greedy"] = _median([_timed(at.run) for _ in range(8)])
    out["play_tick_cpu_s_greedy"] = _cpu_since(n)

    cold, warm, bsteps, bticks, cpu = [], [], [], [], {"cold": [], "warm": [], "step": [], "tick": []}
    for r in range(repeats):
        st.cache_data.clear()
        for bucket, name in ((cold, "cold"), (warm, "warm")):
            at, _ = _session({"sp_text": SENTENCE_30, "sp_beam": "12"})
            bucket.append(_timed(lambda at=at: at.radio(key="sp_mode").set_value("beam").run()))
            cpu[name].append(CPU[-1])
            assert not at.exception, [e.value for e in at.exception]
        for _ in range(3):
            bsteps.append(_click(at, "sp_btn_step"))
            cpu["step"].append(CPU[-1])
        if r == 0:
            _click(at, "btn_play")
            for _ in range(8):
                bticks.append(_timed(at.run))
                cpu["tick"].append(CPU[-1])
    out["beam_switch_s_cold"] = _median(cold)
    out["beam_switch_cpu_s_cold"] = _median(cpu["cold"])
    out["beam_switch_s_warm"] = _median(warm)
    out["beam_switch_cpu_s_warm"] = _median(cpu["warm"])
    out["beam_step_s"] = _median(bsteps)
    out["beam_step_cpu_s"] = _median(cpu["step"])
    out["play_tick_s_beam"] = _median(bticks)
    out["play_tick_cpu_s_beam"] = _median(cpu["tick"])
    out["sentence_30"] = SENTENCE_30
    out["beam_k"] = 12
    out["repeats"] = repeats
    out["torch_threads"] = torch.get_num_threads()
    out["torch_interop_threads"] = torch.get_num_interop_threads()
    return out


def timed_step(page: Any, n: int) -> float:
    """Seconds from a click on Step to the n-th word on screen (then half a second of rest)."""
    from playwright.sync_api import expect

    t0 = time.perf_counter()
    page.get_by_role("button", name=STEP).click()
    expect(page.locator('[data-testid="translation-so-far"] > span')).to_have_count(n, timeout=60_000)
    seconds = time.perf_counter() - t0
    page.wait_for_timeout(500)
    return seconds


def bench_browser(repeats: int) -> dict[str, Any]:
    """Click-to-screen seconds in headless Chromium: first view, greedy step, beam switch and step."""
    from urllib.parse import quote

    from playwright.sync_api import expect, sync_playwright

    from scripts.app_server import running_app

    out: dict[str, Any] = {"first_view_s": [], "greedy_step_s": [], "beam_switch_s_cold": [], "beam_switch_s": [],
                           "beam_step_s": [], "play_025_words_per_s": []}
    with running_app() as app:
        base = app.url
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=[
                "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                "--disable-sync"])
            for r in range(repeats + 1):  # the first round warms the server up (model load) and is dropped
                page = browser.new_page(viewport={"width": 1280, "height": 720})
                chips = page.locator('[data-testid="translation-so-far"] > span')
                step = page.get_by_role("button", name=STEP)
                t0 = time.perf_counter()
                page.goto(f"{base}/?sp_text={quote(SENTENCE_30)}&sp_beam=12")
                step.wait_for(timeout=120_000)
                page.get_by_test_id("source-words").wait_for(timeout=120_000)
                first = time.perf_counter() - t0
                page.wait_for_timeout(1000)
                greedy = [timed_step(page, n) for n in range(1, 4)]
                t0 = time.perf_counter()
                page.get_by_test_id("stRadio").get_by_text("beam", exact=True).click()
                page.get_by_text("beam's best hypothesis").first.wait_for(timeout=120_000)
                switch = time.perf_counter() - t0
                page.wait_for_timeout(1000)
                beam = [timed_step(page, n) for n in range(4, 7)]
                # Play at 0.25 s per word from the first word: words on screen per second of playing
                page.get_by_test_id("stRadio").get_by_text("greedy", exact=True).click()
                page.wait_for_timeout(1500)
                page.get_by_role("button", name="Reset").click()
                expect(chips).to_have_count(0, timeout=60_000)
                page.get_by_role("slider").first.focus()
                page.keyboard.press("ArrowRight")  # 0.5 → 0.25 s per word
                page.get_by_text("0.25 s / word").first.wait_for(timeout=30_000)
                page.wait_for_timeout(1000)
                page.get_by_role("button", name=PLAY).click()
                count = "n => document.querySelectorAll('[data-testid=\"translation-so-far\"] > span').length >= n"
                page.wait_for_function(count, arg=1, timeout=60_000, polling=20)
                t0 = time.perf_counter()
                page.wait_for_function(count, arg=13, timeout=60_000, polling=20)
                play = 12 / (time.perf_counter() - t0)
                page.close()
                if not r:
                    out["beam_switch_s_cold"].append(switch)
                else:
                    out["first_view_s"].append(first)
                    out["greedy_step_s"] += greedy
                    out["beam_switch_s"].append(switch)
                    out["beam_step_s"] += beam
                    out["play_025_words_per_s"].append(play)
            browser.close()
    res = {k: _median(v) for k, v in out.items()}
    res["beam_switch_s_warm"] = res.pop("beam_switch_s")
    return res | {"repeats": repeats}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--threads", type=int, help="torch intra-op threads for the app (default: its own choice)")
    p.add_argument("--label", default="", help="a key to store the results under (default: the thread setting)")
    p.add_argument("--browser", action="store_true", help="also time the clicks in headless Chromium")
    p.add_argument("--json", help="merge the results into this JSON file")
    args = p.parse_args()
    if args.threads:
        os.environ["RNNSEARCH_THREADS"] = str(args.threads)
    from nmt.models.device import cpu_info

    res = bench(args.repeats)
    if args.browser:
        res["browser"] = bench_browser(args.repeats)
    res["cpu"] = cpu_info().model
    res["cpu_count"] = os.cpu_count()
    res["load_average_1_5_15"] = [round(x, 2) for x in os.getloadavg()]
    res["date"] = time.strftime("%Y-%m-%d")
    print(json.dumps(res, indent=1))
    if args.json:
        path = Path(args.json)
        old = json.loads(path.read_text()) if path.exists() else {}
        old[args.label or f"threads={res['torch_threads']}"] = res
        path.write_text(json.dumps(old, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
