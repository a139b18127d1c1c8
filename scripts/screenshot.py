"""Screenshot app views for the README: starts the app on localhost and opens shared-view URLs.

    python scripts/screenshot.py docs/stepper.png "step=6" "" 1280x720
    python scripts/screenshot.py docs/stepper-presentation.png "step=12&present=true" "" 1280x720

Arguments: the PNG to write, the view's query string, the page ("" for the stepper) and the viewport
(default 1280x720, a classroom projector).

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


def main(out: str, query: str, page: str = "", size: str = "1280x720") -> int:
    width, height = (int(x) for x in size.lower().split("x"))
    with running_app() as app:
        q = "&".join(f"{k}={quote(v)}" for k, _, v in (p.partition("=") for p in query.split("&")) if k)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            tab = browser.new_page(viewport={"width": width, "height": height})
            tab.goto(f"{app.url}/{page}?{q}")
            tab.wait_for_selector("[data-testid='stApp']", timeout=60000)
            time.sleep(float(os.environ.get("SHOT_WAIT", "8")))  # let the model load and charts render
            Path(out).parent.mkdir(parents=True, exist_ok=True)
            tab.screenshot(path=out, full_page=False)
            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:5]))
