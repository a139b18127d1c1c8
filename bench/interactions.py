"""The server work one link can start: CPU seconds and memory of the costliest URL of each page (issue 24).

    OMP_NUM_THREADS=1 python bench/interactions.py --json bench/interactions-cpu.json

Each case runs in a fresh process: one AppTest run of the page with its defaults (loads the model, untimed),
then the hostile URL in a new session, timed by the process's CPU time (user + system) and its memory
(peak RSS over the run, less the RSS before). Texts are the longest a URL may carry (2,000-character
sources, 600-character references and explanation sentences), cut from the built-in Europarl test set so
that the models translate real words. Issue 24's limit: at most 10 s of CPU and 200 MB a URL; a case
whose work is behind a button shows that button (``button``) and starts no model work beyond decoding.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

EUROPARL_MODEL = "europarl-en-fr-rnnsearch-50.pt"
LIMIT_CPU_S, LIMIT_MB = 10.0, 200.0


def _text(n: int, side: str = "en") -> str:
    """The first ``n`` characters of one side of the built-in Europarl test set."""
    with gzip.open(ROOT / "evalsets" / "europarl-v7-fr-en" / f"test2000q4.{side}.gz", "rt", encoding="utf-8") as f:
        return " ".join(line.strip() for line in f if line.strip())[:n]


def cases() -> dict[str, tuple[str, dict[str, str], str | None]]:
    """name → (page file, URL parameters, the key of the button that holds the heavy work back, if any)."""
    src, src600, ref = _text(2000), _text(600), _text(600, "fr")
    own = {"ex_preset": "Your own sentence", "ex_text": src600, "ex_step": "30"}
    return {
        "explanation, last word, Multi30k": ("pages/explanation.py", own, "ex_one"),
        "explanation, last word, Europarl": ("pages/explanation.py", {**own, "ex_model": EUROPARL_MODEL}, "ex_one"),
        "explanation, whole sentence tab": ("pages/explanation.py", {**own, "ex_tab": "Whole sentence"}, "ex_all"),
        "explanation, surgery at every step": ("pages/explanation.py", {**own, "ex_tab": "Surgery", "ex_step": "3",
                                                                        "ex_every": "true"}, None),
        "explanation, 600-character reference": ("pages/explanation.py", {**own, "ex_ref": ref}, "ex_one"),
        "compare, 2,000 + 600 characters": ("pages/compare_attention.py", {"cmp_text": src, "cmp_ref": ref}, None),
        "bottleneck, 2,000 + 600 characters": ("pages/bottleneck_compare.py", {"bn_text": src, "bn_ref": ref}, None),
        "beam k=20, n-best 20, Europarl": ("pages/beam_explorer.py", {"bx_text": src, "bx_beam": "20",
                                                                      "bx_nbest": "20", "bx_model": EUROPARL_MODEL},
                                           None),
        "alignment, 200 Europarl pairs": ("pages/alignment_browser.py", {"al_n": "200", "al_model": EUROPARL_MODEL,
                                                                         "al_split": "europarl-v7-fr-en/test2000q4"},
                                          "al_go"),
        "stepper, beam k=12, 2,000 characters": ("app.py", {"text": src, "mode": "beam", "beam": "12"}, None),
    }


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def run_case(name: str) -> dict[str, Any]:
    """One case in this process: warm-up run, then the URL, measured."""
    from streamlit.testing.v1 import AppTest

    page, params, button = cases()[name]
    warm = AppTest.from_file(str(ROOT / page), default_timeout=600)
    warm.query_params.update({k: v for k, v in params.items() if k.endswith("_model")})
    warm.run()
    before, cpu0, t0 = _rss_mb(), resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    at = AppTest.from_file(str(ROOT / page), default_timeout=600)
    at.query_params.update(params)
    at.run()
    cpu1, wall = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter() - t0
    peak = cpu1.ru_maxrss / 1024
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    held = bool(button) and any(b.key == button for b in at.button)
    return {"case": name, "page": page, "cpu_s": round(cpu, 2), "wall_s": round(wall, 1),
            "peak_rss_mb_over_before": round(max(0.0, peak - before), 1), "button_shown": held if button else None,
            "errors": [e.value for e in at.exception] + [e.value for e in at.error],
            "within_limits": cpu <= LIMIT_CPU_S and peak - before <= LIMIT_MB}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--case", help="run one case here and print its JSON (used by the driver)")
    p.add_argument("--only", help="run only the cases whose name contains this")
    p.add_argument("--json", type=Path, help="write the results here")
    args = p.parse_args(argv)
    if args.case:
        print(json.dumps(run_case(args.case), ensure_ascii=False))
        return
    load0, out = os.getloadavg()[0], []
    for name in cases():
        if args.only and args.only not in name:
            continue
        proc = subprocess.run([sys.executable, __file__, "--case", name], capture_output=True, text=True, cwd=ROOT,
                              timeout=1800)
        line = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
        res = json.loads(line) if line.startswith("{") else {"case": name, "failed": proc.stderr[-500:]}
        out.append(res)
        print(json.dumps(res, ensure_ascii=False), flush=True)
    doc = {"what": "bench/interactions.py: CPU and memory of the costliest URL of each page (issue 24)",
           "date": time.strftime("%Y-%m-%d"), "cores": os.cpu_count(), "loadavg_1min_before": round(load0, 2),
           "loadavg_1min_after": round(os.getloadavg()[0], 2), "limits": {"cpu_s": LIMIT_CPU_S, "mb": LIMIT_MB},
           "cases": out}
    if args.json:
        args.json.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
