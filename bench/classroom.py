"""The waits a class sees on the stepper, in headless Chromium at 1280×720 (issue 21 item 5).

    python bench/classroom.py --repeats 5 --json bench/classroom-cpu.json [--label NAME]

Starts ``streamlit run app.py`` with the shipped checkpoints (``checkpoints/``, or
``$RNNSEARCH_CHECKPOINTS``) on a free localhost port and times, from the browser's side:

* ``first_view_s``: a new tab's first view of the stepper until its Step button and the source words
  are on screen, the server warm (a first visit loaded the model and is not counted). Target ≤ 3 s.
* ``step_s``: a click on Step until the new word is on screen. Target ≤ 0.3 s.
* ``freeze_s`` / ``unfreeze_s``: a click on the "Freeze c_i" toggle until the page has been redrawn
  for it (the address bar shows ``freeze``, Streamlit says the script is no longer running, then two animation
  frames), and back. Target ≤ 1 s.
* ``play_s_per_word``: Play at the default 0.5 s per word on a 30-word sentence, seconds per word
  between the 2nd and the 14th word on screen. Keeping pace is 0.5.

Medians over ``--repeats`` (each a fresh tab); the JSON records the CPU, its core count and the load
average before and after, because on a shared machine the wall times include waiting for a core:
compare only numbers taken on an idle machine with the targets.
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
from urllib.parse import parse_qs, quote, urlparse

# the stepper's buttons are named with their clicker key after the word ("Step →", "Play P")
STEP, PLAY = re.compile(r"^Step( |$)"), re.compile(r"^Play( |$)")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TARGETS = {"first_view_s": 3.0, "step_s": 0.3, "freeze_s": 1.0, "unfreeze_s": 1.0, "play_s_per_word": 0.5}
SENTENCE_30 = ("A young woman in a red jacket and a man with a black hat are walking their two dogs "
               "along the river next to a stone bridge in the park.")
CHIPS = '[data-testid="translation-so-far"] > span'
COUNT = "n => document.querySelectorAll('[data-testid=\"translation-so-far\"] > span').length >= n"
IDLE = ("() => document.querySelector('[data-testid=\"stApp\"]')?.getAttribute('data-test-script-state') "
        "=== 'notRunning'")  # Streamlit's root element says whether the page's script is running
FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"


def _median(xs: list[float]) -> float:
    return round(statistics.median(xs), 3)


def _freeze_in_url(page: Any) -> bool:
    return parse_qs(urlparse(page.url).query).get("freeze") == ["true"]


def _toggle(page: Any, frozen: bool) -> float:
    """Seconds from a click on the freeze toggle until the page has been redrawn for it."""
    t0 = time.perf_counter()
    page.get_by_text("Freeze c_i (RNNencdec)").click()
    page.wait_for_function(f"() => new URLSearchParams(location.search).get('freeze') {'===' if frozen else '!=='} "
                           "'true'", timeout=60_000, polling=10)
    page.wait_for_function(IDLE, timeout=60_000, polling=10)
    page.evaluate(FRAMES)
    return time.perf_counter() - t0


def one_round(page: Any, base: str) -> dict[str, Any]:
    """One fresh tab's measurements."""
    from playwright.sync_api import expect

    out: dict[str, Any] = {}
    t0 = time.perf_counter()
    page.goto(base + "/", timeout=120_000)
    page.get_by_role("button", name=STEP).wait_for(timeout=120_000)
    page.get_by_test_id("source-words").wait_for(timeout=120_000)
    out["first_view_s"] = time.perf_counter() - t0
    page.wait_for_timeout(1500)
    steps = []
    for n in range(1, 4):
        t0 = time.perf_counter()
        page.get_by_role("button", name=STEP).click()
        expect(page.locator(CHIPS)).to_have_count(n, timeout=60_000)
        steps.append(time.perf_counter() - t0)
        page.wait_for_timeout(500)
    out["step_s"] = steps
    out["freeze_s"] = _toggle(page, True)
    page.wait_for_timeout(1000)
    out["unfreeze_s"] = _toggle(page, False)
    page.wait_for_timeout(1000)
    page.goto(f"{base}/?text={quote(SENTENCE_30)}", timeout=120_000)
    page.get_by_role("button", name=PLAY).wait_for(timeout=120_000)
    page.wait_for_timeout(1500)
    page.get_by_role("button", name=PLAY).click()
    page.wait_for_function(COUNT, arg=2, timeout=60_000, polling=10)
    t0 = time.perf_counter()
    page.wait_for_function(COUNT, arg=14, timeout=60_000, polling=10)
    out["play_s_per_word"] = (time.perf_counter() - t0) / 12
    page.get_by_role("button", name="Pause").click()
    return out


def bench(repeats: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    from scripts.app_server import running_app
    from tests.chromium import CHROMIUM, CHROMIUM_ARGS

    env = {"RNNSEARCH_CHECKPOINTS": os.environ.get("RNNSEARCH_CHECKPOINTS") or str(ROOT / "checkpoints")}
    rounds = []
    with running_app(env=env, timeout=120) as app, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        for r in range(repeats + 1):  # the first round warms the server (model load) and is dropped
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            got = one_round(page, app.url)
            page.close()
            if r:
                rounds.append(got)
        browser.close()
    res = {k: _median([x for rnd in rounds for x in (rnd[k] if isinstance(rnd[k], list) else [rnd[k]])])
           for k in TARGETS}
    res["meets_target"] = {k: res[k] <= v * (1.1 if k == "play_s_per_word" else 1.0) for k, v in TARGETS.items()}
    return res | {"targets": TARGETS, "repeats": repeats}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--label", default="", help="a key to store the results under (default: the date)")
    p.add_argument("--note", default="", help="a sentence stored beside the numbers (e.g. what else ran)")
    p.add_argument("--json", help="merge the results into this JSON file")
    args = p.parse_args()
    from nmt.models.device import cpu_info

    load_before = [round(x, 2) for x in os.getloadavg()]
    res = bench(args.repeats)
    res |= {"cpu": cpu_info().model, "cpu_count": os.cpu_count(), "load_average_1_5_15_before": load_before,
            "load_average_1_5_15_after": [round(x, 2) for x in os.getloadavg()], "date": time.strftime("%Y-%m-%d"),
            "note": args.note}
    print(json.dumps(res, indent=1))
    if args.json:
        path = Path(args.json)
        old = json.loads(path.read_text()) if path.exists() else {}
        old[args.label or res["date"]] = res
        path.write_text(json.dumps(old, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
