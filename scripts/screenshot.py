"""Screenshot app views for the README: starts the app on localhost and opens shared-view URLs.

    python scripts/screenshot.py docs/stepper.png "sp_step=6" "" 1280x720
    python scripts/screenshot.py docs/stepper-presentation.png "sp_step=12&sp_present=true" "" 1280x720
    python scripts/screenshot.py docs/explanation.png "ex_ref=Une fillette mange une pomme.&ex_step=1" \
        explanation 1280x720 280

Arguments: the PNG to write, the view's query string, the page ("" for the stepper), the viewport
(default 1280x720, a classroom projector) and how many pixels to scroll the page down first (default 0).
The views shown in the README: ``python scripts/screenshot.py --readme`` (:data:`README_SHOTS`).

Needs Playwright (requirements-dev.txt) and Debian's Chromium (/usr/bin/chromium).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from urllib.parse import quote

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts.app_server import running_app  # noqa: E402

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync"]


# Streamlit marks its root element with the script's state: "running" while the page's script runs
IDLE = ("() => document.querySelector('[data-testid=\"stApp\"]')?.getAttribute('data-test-script-state') "
        "=== 'notRunning' && !document.querySelector('[data-testid=\"stSkeleton\"]')")
SCROLL_MAIN = "(y) => { document.querySelector('[data-testid=\"stMain\"]').scrollTop = y; }"
CHARTS_DRAWN = ("() => [...document.querySelectorAll('[data-testid=\"stVegaLiteChart\"]')]"
                ".every(c => c.querySelector('svg, canvas'))")


def settle(tab: object, timeout_ms: int = 300_000) -> None:
    """Wait until the page has finished: its script idle twice a second apart (a bound control's first
    view runs the script once more), no placeholder left and every chart drawn, then ``SHOT_WAIT``
    seconds more (default 2) for the charts' last redraw. A fixed wait caught a loaded machine
    mid-run: grey placeholders instead of the buttons and the heatmap."""
    for _ in range(2):
        tab.wait_for_function(IDLE, timeout=timeout_ms, polling=200)
        tab.wait_for_timeout(1000)
    tab.wait_for_function(CHARTS_DRAWN, timeout=timeout_ms, polling=200)
    time.sleep(float(os.environ.get("SHOT_WAIT", "2")))


def main(out: str, query: str, page: str = "", size: str = "1280x720", scroll: str = "0") -> int:
    width, height = (int(x) for x in size.lower().split("x"))
    with running_app() as app:
        q = "&".join(f"{k}={quote(v)}" for k, _, v in (p.partition("=") for p in query.split("&")) if k)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            tab = browser.new_page(viewport={"width": width, "height": height})
            tab.goto(f"{app.url}/{page}?{q}")
            tab.wait_for_selector("[data-testid='stApp']", timeout=60000)
            settle(tab)
            if int(scroll):
                tab.evaluate(SCROLL_MAIN, int(scroll))
                tab.wait_for_timeout(1500)
            Path(out).parent.mkdir(parents=True, exist_ok=True)
            tab.screenshot(path=out, full_page=False)
            browser.close()
    return 0


# The README's screenshots: (file, query, page, viewport, scroll). "Adjective swap" at « rouge » (the
# weight back on 'red' after jumping ahead to 'car'), the same sentence finished in presentation mode,
# the explainer's "Reordered phrase" at « européen » on the Europarl pair (« Espace » read 'Area', then
# the reversed diagonal) and the explanation page on a reference typed in, at the word « fillette ».
ADJECTIVE_SWAP = "sp_text=A red car is parked near a white house."
README_SHOTS = (
    ("docs/stepper.png", f"{ADJECTIVE_SWAP}&sp_step=3", "", "1280x720", "0"),
    ("docs/stepper-presentation.png", f"{ADJECTIVE_SWAP}&sp_step=12&sp_present=true", "", "1280x720", "0"),
    ("docs/stepper-europarl.png", "sp_model=europarl-en-fr-50&sp_text=The agreement on the European Economic "
     "Area was signed in August 1992.&sp_step=7", "", "1280x720", "0"),
    ("docs/explanation.png", "ex_ref=Une fillette mange une pomme.&ex_step=1", "explanation", "1280x720", "280"),
    ("docs/watch-it-learn.png", "wl_run=europarl-tatoeba-en-fr-30k&wl_update=1000&wl_present=true", "watch_it_learn",
     "1280x720", "0"),
)


if __name__ == "__main__":
    if sys.argv[1:] == ["--readme"]:
        sys.exit(max(main(str(ROOT / out), *rest) for out, *rest in README_SHOTS))
    sys.exit(main(*sys.argv[1:6]))
