"""Print every piece of text under 14 px or 4.5:1 contrast on every page, at 1280×720, in Chromium.

    python scripts/readability_audit.py [--all] [--zoom 1.5]

Starts ``streamlit run app.py`` with the shipped checkpoints, opens each page of ``app.PAGES``
(and the stepper stepped, and in presentation mode), and lists the offenders found by
:mod:`tests.readability` (``--all``: every reading). ``tests/test_browser_readable.py`` makes the
same check a test.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app import PAGES  # noqa: E402
from scripts import app_server  # noqa: E402
from tests import readability as R  # noqa: E402

VIEWS = [(p.address, "") for p in PAGES if p.menu] + [
    ("/", "?step=4"), ("/", "?step=6&present=true")]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--all", action="store_true", help="print every reading, not only the offenders")
    p.add_argument("--only", help="only views whose path contains this")
    p.add_argument("--shots", help="save a screenshot of each view into this folder")
    args = p.parse_args()
    from playwright.sync_api import sync_playwright

    env = {"RNNSEARCH_CHECKPOINTS": str(ROOT / "checkpoints"), "OMP_NUM_THREADS": "1"}
    bad = 0
    with app_server.running_app(env=env, timeout=120) as app, sync_playwright() as pw:
        b = pw.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"])
        page = b.new_page(viewport={"width": 1280, "height": 720})
        for path, query in VIEWS:
            if args.only and args.only not in path + query:
                continue
            R.rendered(page, app.url + path + query)
            rows = R.readings(page)
            worse = R.offenders(rows)
            bad += len(worse)
            print(f"== {path}{query}: {len(rows)} texts, {len(worse)} offenders", flush=True)
            for r in rows if args.all else worse:
                print("  ", r)
            if args.shots:
                Path(args.shots).mkdir(parents=True, exist_ok=True)
                name = (path.strip("/") or "stepper") + query.replace("?", "_").replace("&", "_").replace("=", "-")
                page.screenshot(path=str(Path(args.shots) / f"{name}.png"), full_page=True)
        b.close()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
