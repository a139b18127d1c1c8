"""Server-side seconds of the analysis pages' slow interactions, through Streamlit's AppTest (CPU).

    python bench/app_analysis.py --json bench/app-analysis-cpu.json

Uses the shipped checkpoints (``checkpoints/``) and the corpora of ``data/``. Each number is one
AppTest run in this process: "cold" follows a cleared ``st.cache_data`` (the models stay loaded, as
on a running server), "warm" is the same view again from a new session (another visitor):

* alignment browser: open the Hansards gold set (first 50 pairs decoded and tabulated), narrow the
  length filter to 3+ words (a new first 50, mostly the same pairs), and press "Compute AER" over
  all 447 sentences;
* bottleneck: move the length slider to a new length once the page is open (three models, six
  single-sentence decodes; median and fastest of three), and back to one seen before, on Multi30k
  (12-16 words) and on Europarl (30-34 words; the split's first 5000 lines are read);
* beam explorer: the first view of a new session (beam 5, default sentence).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

HANSARDS = "alignment/hansards-naacl2003-en-fr/test"
EUROPARL = "europarl-v7-fr-en/test2000q4"
TIMEOUT = 600


def _page(name: str, **params: str) -> Any:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "pages" / name), default_timeout=TIMEOUT)
    at.query_params.update(params)
    return at


def _timed(at: Any, action: Any = None) -> float:
    t0 = time.perf_counter()
    (action or at.run)()
    dt = time.perf_counter() - t0
    assert not at.exception, at.exception
    return round(dt, 2)


def _clear() -> None:
    """Forget every result (cache_data, and the pages' shared store where there is one); keep the models."""
    import streamlit as st

    from ui.common import heavy

    st.cache_data.clear()
    heavy.clear_all()  # the byte-bounded stores: decodings, per-sentence facts, attributions


def bench_alignment() -> dict[str, float]:
    out = {}
    _clear()
    at = _page("alignment_browser.py", al_split=HANSARDS)
    out["hansards_open_s_cold"] = _timed(at)
    at = _page("alignment_browser.py", al_split=HANSARDS)
    out["hansards_open_s_warm"] = _timed(at)
    out["hansards_filter_change_s"] = _timed(at, lambda: at.slider(key="al_len").set_range(3, 120).run())
    out["aer_button_s_cold"] = _timed(at, lambda: at.button(key="al_aer").click().run())
    at = _page("alignment_browser.py", al_split=HANSARDS)
    at.run()
    out["aer_button_s_warm"] = _timed(at, lambda: at.button(key="al_aer").click().run())
    return out


def _slide(at: Any, length: int) -> Any:
    return lambda: at.slider(key="bn_len").set_value(length).run()


def bench_bottleneck() -> dict[str, float]:
    out = {}
    for name, split, n in (("multi30k", "multi30k/test_2016_flickr", 12), ("europarl", EUROPARL, 30)):
        at = _page("bottleneck_compare.py", bn_from="corpus by length", bn_len=str(n), bn_split=split)
        out[f"bottleneck_{name}_open_s"] = _timed(at)
        at.slider(key="bn_len").set_value(n + 1).run()  # the first change warms what a change needs
        changes = [_timed(at, _slide(at, k)) for k in (n + 2, n + 3, n + 4)]
        out[f"length_slider_change_s_warm_{name}"] = sorted(changes)[1]  # median of three new lengths
        out[f"length_slider_change_s_warm_{name}_min"] = min(changes)
        out[f"length_slider_back_s_{name}"] = _timed(at, _slide(at, n + 2))  # a length seen before: cached
    return out


def bench_beam() -> dict[str, float]:
    _clear()
    cold = _timed(_page("beam_explorer.py"))
    warm = _timed(_page("beam_explorer.py"))
    return {"beam_first_view_s_cold": cold, "beam_first_view_s_warm": warm}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--what", nargs="+", default=["alignment", "bottleneck", "beam"],
                   choices=["alignment", "bottleneck", "beam"])
    p.add_argument("--json", help="write (merge) the results into this JSON file under --label")
    p.add_argument("--label", default="after")
    args = p.parse_args()
    os.environ.pop("RNNSEARCH_DATA", None)
    os.environ.pop("RNNSEARCH_CHECKPOINTS", None)
    import torch

    from nmt.models.device import cpu_info

    res: dict[str, Any] = {}
    for what in args.what:
        res.update({"alignment": bench_alignment, "bottleneck": bench_bottleneck, "beam": bench_beam}[what]())
        print(json.dumps(res), file=sys.stderr)
    if args.json:
        path = Path(args.json)
        old = json.loads(path.read_text()) if path.exists() else {}
        res["torch_threads"] = torch.get_num_threads()  # as the pages left it
        res["load_average_1min_after"] = round(os.getloadavg()[0], 2)  # other work on the machine
        old["machine"] = {"cpu": cpu_info().model, "cores": os.cpu_count(), "torch": str(torch.__version__),
                          "date": time.strftime("%Y-%m-%d")}
        old.setdefault(args.label, {}).update(res)
        path.write_text(json.dumps(old, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
