"""Load test: N concurrent sessions pressing "Step" on the stepper page, without a browser.

    python bench/load.py --sessions 1,10,20 --steps 10 --json bench/load-cpu.json
    python bench/load.py --class --json bench/load-cpu.json   # issue 24's class (30 sessions, Step every 2 s)

Starts ``streamlit run app.py`` on a free 127.0.0.1 port (or attaches to one: --port/--pid). Per
round, N websocket sessions speak Streamlit's own protocol (BackMsg/ForwardMsg protobufs on
/_stcore/stream, as the browser does): each opens the app's default page, finds the "Step" button
by its label and presses it K times (a fragment rerun, as in the browser), timing send →
script_finished on loopback: the server-side step latency. From /proc/PID: the server's CPU time
per step and its RSS at baseline (model loaded, no session), before, peak and after each round.
"After" means the round's sessions are closed and reaped: the server runs with --ttl s of
server.disconnectedSessionTTL (Streamlit's default keeps a closed session 120 s for a reconnect)
and a probe connection makes the session store drop expired entries. Bounded: at most 50
sessions and 100 steps, --step-timeout per run, --timeout in all; sockets are always closed and
a server this script started is always stopped.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import random
import re
import sys
import time
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import ClientConnection, connect
from websockets.typing import Subprotocol

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts.app_server import FLAGS, HOST, running_app  # noqa: E402

MAX_SESSIONS, MAX_STEPS = 50, 100
WORDS = re.compile(r"\*\*(\d+)\*\* target words? written")
EARLY = ForwardMsg.FINISHED_EARLY_FOR_RERUN
FAILED = {ForwardMsg.FINISHED_WITH_COMPILE_ERROR}


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0-100) by linear interpolation between order statistics (numpy's default)."""
    if not values:
        return float("nan")
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def summarize(seconds: list[float]) -> dict[str, float | int]:
    """Count, p50, p95 and max of latencies given in seconds, in milliseconds (0.1 ms)."""
    ms = [s * 1000 for s in seconds]
    return {"n": len(ms), "p50_ms": round(percentile(ms, 50), 1), "p95_ms": round(percentile(ms, 95), 1),
            "max_ms": round(max(ms), 1) if ms else float("nan")}


def rss_mib(pid: int) -> float:
    """Resident set size of a process in MiB, from /proc/PID/status."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    raise RuntimeError(f"no VmRSS for pid {pid}")


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system) a process has used, from /proc/PID/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine() -> dict[str, Any]:
    """CPU model, cores and the versions that matter for the numbers."""
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), platform.machine())
    return {"cpu": cpu, "cores": os.cpu_count(), "usable_cores": len(os.sched_getaffinity(0)),
            "python": platform.python_version(), "streamlit": version("streamlit"), "torch": version("torch")}


@dataclass
class Session:
    """One simulated browser tab: a websocket and what the last runs told it."""

    port: int
    timeout: float
    ws: ClientConnection | None = None
    page_hash: str = ""
    query: str = ""
    page_name: str = ""  # a page of pages/ ("lesson", "vote"); "" the app's own
    buttons: dict[str, tuple[str, bool, str]] = field(default_factory=dict)  # label → (id, disabled, fragment)
    words: int | None = None
    errors: list[str] = field(default_factory=list)

    async def open(self) -> None:
        """Connect the websocket (loopback, no proxy), as the browser's "streamlit" subprotocol."""
        self.ws = await connect(f"ws://{HOST}:{self.port}/_stcore/stream", subprotocols=[Subprotocol("streamlit")],
                                max_size=2**26, open_timeout=self.timeout, compression=None, proxy=None)

    async def close(self) -> None:
        """Close the websocket; the server then keeps the session for its TTL."""
        if self.ws is not None:
            await self.ws.close()

    async def run(self, label: str | None = None) -> float:
        """Rerun the page (pressing the button ``label`` if given, as the browser would: a fragment
        rerun when the button is in one); returns the seconds from send to the final script_finished."""
        assert self.ws is not None
        msg = BackMsg()
        cs = msg.rerun_script
        cs.query_string, cs.page_script_hash, cs.page_name = self.query, self.page_hash, self.page_name
        cs.context_info.url = f"http://{HOST}:{self.port}/{self.page_name}"
        cs.context_info.timezone = "UTC"
        if label is not None:
            wid, _, fragment = self.buttons[label]
            cs.widget_states.widgets.add(id=wid, trigger_value=True)
            cs.fragment_id = fragment
        t0 = time.perf_counter()
        await self.ws.send(msg.SerializeToString())
        while True:
            left = max(0.0, t0 + self.timeout - time.perf_counter())
            fwd = ForwardMsg.FromString(await asyncio.wait_for(self.ws.recv(decode=False), left))
            kind = fwd.WhichOneof("type")
            if kind == "delta":
                self._read_delta(fwd)
            elif kind == "new_session":
                self.page_hash = fwd.new_session.page_script_hash or self.page_hash
            elif kind == "navigation":
                self.page_hash = fwd.navigation.page_script_hash or self.page_hash
            elif kind == "page_info_changed":
                self.query = fwd.page_info_changed.query_string
            elif kind == "page_not_found":
                self.errors.append("page not found")
            elif kind == "script_finished" and fwd.script_finished != EARLY:
                if fwd.script_finished in FAILED:
                    self.errors.append(f"script finished with status {fwd.script_finished}")
                return time.perf_counter() - t0

    def _read_delta(self, fwd: ForwardMsg) -> None:
        """Note buttons (by label), the words-written caption and any error the page shows."""
        el = fwd.delta.new_element
        which = el.WhichOneof("type")
        if which == "button":
            self.buttons[el.button.label] = (el.button.id, el.button.disabled, fwd.delta.fragment_id)
        elif which == "exception":
            self.errors.append(f"exception {el.exception.type}: {el.exception.message[:120]}")
        elif which == "alert" and el.alert.format == Alert.ERROR:
            self.errors.append(f"st.error: {el.alert.body[:120]}")
        elif which == "markdown" and (m := WORDS.search(el.markdown.body)):
            self.words = int(m.group(1))


def press_times(start: float, period: float, steps: int) -> list[float]:
    """When a session pressing Step every ``period`` seconds from ``start`` presses (open loop: a slow
    step does not push the later presses back; a press that is already due goes at once)."""
    return [start + k * period for k in range(steps)]


async def drive(session: Session, steps: int, think: float, rng: random.Random, out: list[float],
                period: float = 0.0) -> None:
    """Press Step ``steps`` times (Reset, untimed, when decoding has ended): after a pause of ``think``
    s (±50 %), or, with ``period``, every ``period`` s from a random phase (a class at its own pace)."""
    due = press_times(time.perf_counter() + rng.uniform(0, period), period, steps) if period else []
    for k in range(steps):
        if "Step" not in session.buttons:
            session.errors.append("no Step button on the page")
            return
        if session.buttons["Step"][1]:  # disabled: the translation is complete
            await session.run("Reset")
        pause = due[k] - time.perf_counter() if period else think * rng.uniform(0.5, 1.5)
        await asyncio.sleep(max(0.0, pause))
        before = session.words
        out.append(await session.run("Step"))
        if before is not None and session.words != before + 1:
            session.errors.append(f"Step went from {before} to {session.words} words")


async def sample_rss(pid: int, peak: list[float], stop: asyncio.Event) -> None:
    """Keep the highest RSS seen in ``peak[0]`` until ``stop`` is set."""
    while not stop.is_set():
        peak[0] = max(peak[0], rss_mib(pid))
        await asyncio.sleep(0.2)


async def settle(port: int, pid: int, ttl: float) -> float:
    """RSS once closed sessions have outlived the TTL and been reaped (a probe connection's
    disconnect writes to the session store, which reaps expired entries)."""
    await asyncio.sleep(ttl + 0.5)
    probe = Session(port, 30)
    try:
        await probe.open()
    finally:
        await probe.close()
    await asyncio.sleep(1.0)
    return rss_mib(pid)


async def round_(port: int, pid: int, n: int, args: argparse.Namespace) -> dict[str, Any]:
    """One round of ``n`` concurrent sessions: open, first view, then the timed Step presses."""
    sessions = [Session(port, args.step_timeout) for _ in range(n)]
    load0 = round(os.getloadavg()[0], 2)
    lat: list[float] = []
    errors: list[str] = []
    before = rss_mib(pid)
    peak, stop = [before], asyncio.Event()
    sampler = asyncio.create_task(sample_rss(pid, peak, stop))
    wall = cpu = client = 0.0
    try:
        await asyncio.wait_for(asyncio.gather(*(s.open() for s in sessions)), args.step_timeout)
        await asyncio.wait_for(asyncio.gather(*(s.run() for s in sessions)), args.timeout)  # first view
        t0, cpu0, client0 = time.perf_counter(), cpu_s(pid), time.process_time()
        results = await asyncio.wait_for(asyncio.gather(
            *(drive(s, args.steps, args.think, random.Random(i), lat, args.period) for i, s in enumerate(sessions)),
            return_exceptions=True), args.timeout)
        errors += [f"{type(r).__name__}: {r}" for r in results if isinstance(r, BaseException)]
        wall, cpu, client = time.perf_counter() - t0, cpu_s(pid) - cpu0, time.process_time() - client0
    except Exception as e:  # a dead server or a timeout ends the round, not the script
        errors.append(f"round aborted: {type(e).__name__}: {e}")
    finally:
        await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)
        stop.set()
        await sampler
    errors += [e for s in sessions for e in s.errors]
    wall = max(wall, 1e-9)
    return {"sessions": n, "offered_steps_per_s": round(n / args.period, 2) if args.period else None,
            "loadavg_1min_before": load0, "steps": len(lat), "wall_s": round(wall, 1),
            "steps_per_s": round(len(lat) / wall, 1),
            "latency": summarize(lat), "server_cpu_ms_per_step": round(1000 * cpu / max(1, len(lat)), 1),
            "server_cpu_util": round(cpu / wall, 2), "client_cpu_util": round(client / wall, 2),
            "loadavg_1min_after": round(os.getloadavg()[0], 2),
            "errors": len(errors), "error_samples": sorted(set(errors))[:5],
            "rss_mib": {"before": before, "peak": peak[0], "after": await settle(port, pid, args.ttl)}}


async def bench(args: argparse.Namespace, port: int, pid: int) -> dict[str, Any]:
    """A warm-up session (loads the model, untimed), the baseline RSS, then one round per N."""
    warm = Session(port, 120)
    try:
        await warm.open()
        await warm.run()
    finally:
        await warm.close()
    base = await settle(port, pid, args.ttl)
    print(f"{'N':>3} {'p50 ms':>7} {'p95 ms':>7} {'max ms':>7} {'cpu/step':>8} {'steps/s':>7} {'errors':>6} "
          f"  RSS MiB: base {base}, before/peak/after", flush=True)
    rounds = []
    for n in args.sessions:
        r = await round_(port, pid, n, args)
        rounds.append(r)
        lat, rss = r["latency"], r["rss_mib"]
        print(f"{n:>3} {lat['p50_ms']:>7} {lat['p95_ms']:>7} {lat['max_ms']:>7} {r['server_cpu_ms_per_step']:>8} "
              f"{r['steps_per_s']:>7} {r['errors']:>6}   {rss['before']} / {rss['peak']} / {rss['after']}", flush=True)
    return {"rss_baseline_mib": base, "rounds": rounds}


CLASS = {"sessions": 30, "period_s": 2.0, "steps": 20, "ramp": "30,40,50", "p95_ms": 300.0, "slow_ms": 1000.0,
         "rss_slack": 0.05}
"""Issue 24's class: 30 sessions each pressing Step every 2 s; step p95 ≤ 300 ms, no error, memory back to
its baseline (within 5 %) afterwards; and the offered rate (steps/s) at which p95 passes 1 s."""


def crossing(points: list[tuple[float, float]], limit: float) -> float | None:
    """The rate at which p95 first passes ``limit``, from (rate, p95) points sorted by rate: linear
    between the last point at or under it and the first over it; the first rate if even that is over;
    None if no point is over (the limit lies beyond the rates tried)."""
    under: tuple[float, float] | None = None
    for rate, p95 in points:
        if p95 > limit:
            if under is None:
                return rate
            (r0, y0), (r1, y1) = under, (rate, p95)
            return round(r0 + (r1 - r0) * (limit - y0) / (y1 - y0), 2)
        under = (rate, p95)
    return None


def verdict(rounds: list[dict[str, Any]], baseline_mib: float) -> dict[str, Any]:
    """Issue 24's class verdict from the rounds of a ``--class`` run (:data:`CLASS`)."""
    at = next((r for r in rounds if r["sessions"] == CLASS["sessions"]), None)
    points = sorted((r["offered_steps_per_s"], r["latency"]["p95_ms"]) for r in rounds if r["offered_steps_per_s"])
    out: dict[str, Any] = {"p95_1s_passed_at_steps_per_s": crossing(points, CLASS["slow_ms"])}
    if at is None:
        return {**out, "pass": False, "why": f"no round of {CLASS['sessions']} sessions"}
    rss_ok = at["rss_mib"]["after"] <= baseline_mib * (1 + CLASS["rss_slack"])
    checks = {"p95_ms": at["latency"]["p95_ms"], "p95_ok": at["latency"]["p95_ms"] <= CLASS["p95_ms"],
              "errors": at["errors"], "errors_ok": at["errors"] == 0, "rss_after_mib": at["rss_mib"]["after"],
              "rss_baseline_mib": baseline_mib, "rss_ok": rss_ok}
    return {**out, **checks, "pass": checks["p95_ok"] and checks["errors_ok"] and rss_ok}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, checked against the bounds."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sessions", default="1,10,20", help="concurrent sessions per round, e.g. 1,10,20")
    p.add_argument("--steps", type=int, default=10, help="Step presses per session")
    p.add_argument("--think", type=float, default=0.0, help="mean pause before each press, s (±50%%)")
    p.add_argument("--period", type=float, default=0.0,
                   help="press Step every PERIOD s instead (open loop, random phase per session)")
    p.add_argument("--class", dest="class_", action="store_true",
                   help="issue 24's class: 30 sessions pressing Step every 2 s, 20 presses each, then rounds of "
                        "40 and 50 for the rate at which p95 passes 1 s; a verdict in the JSON")
    p.add_argument("--ttl", type=int, default=2, help="server.disconnectedSessionTTL (of an attached server too), s")
    p.add_argument("--step-timeout", type=float, default=60.0, help="limit on one run, s")
    p.add_argument("--timeout", type=float, default=1200.0, help="limit on the whole bench, s")
    p.add_argument("--option", action="append", default=[], help="server option, e.g. runner.postScriptGC=false")
    p.add_argument("--env", action="append", default=[], help="server environment, e.g. OMP_NUM_THREADS=1")
    p.add_argument("--port", type=int, help="attach to a server already on 127.0.0.1:PORT (needs --pid)")
    p.add_argument("--pid", type=int, help="that server's process id, for its RSS and CPU time")
    p.add_argument("--json", type=Path, help="add the run to this file (replacing one with the same settings)")
    args = p.parse_args(argv)
    if args.class_:
        args.sessions, args.period, args.steps = CLASS["ramp"], CLASS["period_s"], CLASS["steps"]
    args.sessions = [int(x) for x in str(args.sessions).split(",")]
    if not all(1 <= n <= MAX_SESSIONS for n in args.sessions) or not 1 <= args.steps <= MAX_STEPS:
        p.error(f"sessions must be 1..{MAX_SESSIONS} and steps 1..{MAX_STEPS}")
    if (args.port is None) != (args.pid is None):
        p.error("--port and --pid go together")
    return args


def save(path: Path, run: dict[str, Any]) -> None:
    """Add ``run`` to the JSON file at ``path``, replacing a run with the same settings."""
    key = ("server_options", "server_env", "think_s", "period_s", "steps_per_session")
    old = json.loads(path.read_text()) if path.exists() else {}
    runs = [r for r in old.get("runs", []) if any(r.get(k) != run[k] for k in key)]
    doc = {"what": "bench/load.py: N concurrent sessions pressing Step on the stepper page, over Streamlit's "
                   "websocket protocol; latency = send → script_finished on loopback",
           "machine": machine(), "runs": [*runs, run]}
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")


def main(argv: list[str] | None = None) -> None:
    """Start (or attach to) the server, run the rounds, print the table and save the JSON."""
    args = parse_args(argv)
    env = dict(kv.split("=", 1) for kv in args.env)
    load0, t0 = os.getloadavg()[0], time.perf_counter()
    options = [f"server.disconnectedSessionTTL={args.ttl}", *args.option]
    with contextlib.nullcontext() if args.port else running_app(env, options) as app:
        port, pid = (app.port, app.proc.pid) if app else (args.port, args.pid)
        res = asyncio.run(asyncio.wait_for(bench(args, port, pid), args.timeout))
    run = {"date": time.strftime("%Y-%m-%d"), "server_flags": " ".join(FLAGS) if app else "attached",
           "server_options": args.option, "server_env": env,
           "think_s": args.think, "period_s": args.period, "steps_per_session": args.steps, "ttl_s": args.ttl,
           "loadavg_1min_before": round(load0, 2), "bench_s": round(time.perf_counter() - t0, 1), **res}
    if args.class_:
        run["class"] = verdict(res["rounds"], res["rss_baseline_mib"])
        print(json.dumps(run["class"], ensure_ascii=False))
    print(f"done in {run['bench_s']} s")
    if args.json:
        save(args.json, run)


if __name__ == "__main__":
    main()
