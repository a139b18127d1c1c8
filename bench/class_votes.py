"""Load test of a class: phones voting in a Lesson room while students step on the stepper, one server.

    python bench/class_votes.py --phones 60 --students 30 --json bench/class-votes-cpu.json

Starts ``streamlit run app.py`` on a free 127.0.0.1 port (``scripts.app_server``) and speaks Streamlit's
own protocol over websockets, as ``bench/load.py`` does (its :class:`bench.load.Session`): a projector
session opens ``/lesson`` at stop 7 with phones voting (which starts a room) and redraws its join line
every 2 s as the browser's fragment does; each phone session opens ``/vote?room=CODE`` with its own id and
redraws its page every 2 s as the browser does (while the students step) and taps one word at a
random moment within ``--spread`` seconds; each student presses Step every 2 s.

* ``tap``: a phone's tap until its page says its vote is counted (server-side, loopback).
* ``tap_to_projector``: a tap until the projector's next redraw counts it (includes the projector's
  2 s polling, as in the classroom).
* ``step``: the students' Step latency meanwhile; errors; the server's RSS before, peak and after
  (the sessions closed and reaped).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.load import Session, cpu_s, drive, machine, sample_rss, settle, summarize  # noqa: E402
from scripts.app_server import running_app  # noqa: E402

COUNT = re.compile(r"first vote: \*\*(\d+) votes?\*\*")
POLL_S = 2.0


class Tab(Session):
    """A browser tab whose page has a fragment redrawn every 2 s (the phone's page, the projector's join
    line): remembers that fragment, and counts the votes the join line shows."""

    count: int = -1
    strip: str = ""

    def _read_delta(self, fwd: Any) -> None:
        super()._read_delta(fwd)
        self.strip = self.strip or fwd.delta.fragment_id
        el = fwd.delta.new_element
        if el.WhichOneof("type") == "markdown" and (m := COUNT.search(el.markdown.body)):
            self.count, self.strip = int(m.group(1)), fwd.delta.fragment_id or self.strip

    async def poll(self) -> float:
        """Redraw the join line's fragment, as the browser does every 2 s; the seconds it took."""
        from streamlit.proto.BackMsg_pb2 import BackMsg

        assert self.ws is not None
        msg = BackMsg()
        cs = msg.rerun_script
        cs.query_string, cs.page_script_hash, cs.page_name = self.query, self.page_hash, self.page_name
        cs.fragment_id, cs.is_auto_rerun = self.strip, True
        cs.context_info.url = f"http://127.0.0.1:{self.port}/{self.page_name}"
        t0 = time.perf_counter()
        await self.ws.send(msg.SerializeToString())
        return await self.wait_finished(t0)

    async def wait_finished(self, t0: float) -> float:
        """Read until the script (or fragment) run ends."""
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        from bench.load import EARLY

        assert self.ws is not None
        while True:
            left = max(0.0, t0 + self.timeout - time.perf_counter())
            fwd = ForwardMsg.FromString(await asyncio.wait_for(self.ws.recv(decode=False), left))
            if fwd.WhichOneof("type") == "delta":
                self._read_delta(fwd)
            elif fwd.WhichOneof("type") == "script_finished" and fwd.script_finished != EARLY:
                return time.perf_counter() - t0


async def page(session: Session, name: str, query: str) -> None:
    """Open page ``name`` with ``query`` (the first view)."""
    session.query, session.page_name = query, name
    await session.run()


async def phone(s: Tab, spread: float, until: float, rng: random.Random, taps: list[tuple[float, float]]) -> None:
    """Redraw every 2 s (as the phone's page does) until ``until``; at a random moment within ``spread``
    s, tap "car" and note (tap sent, vote confirmed)."""
    tap_at, next_poll = time.perf_counter() + rng.uniform(0, spread), time.perf_counter() + rng.uniform(0, POLL_S)
    tapped = False
    while time.perf_counter() < until or not tapped:
        if not tapped and tap_at <= next_poll:
            await asyncio.sleep(max(0.0, tap_at - time.perf_counter()))
            if "car" not in s.buttons:
                s.errors.append("no 'car' button on the phone")
                return
            t0 = time.perf_counter()
            await s.run("car")
            taps.append((t0, time.perf_counter()))
            tapped = True
            continue
        await asyncio.sleep(max(0.0, next_poll - time.perf_counter()))
        await s.poll()
        next_poll += POLL_S


async def watch(p: Tab, want: int, shown: list[tuple[float, int]], deadline: float) -> None:
    """Redraw the projector every 2 s until it counts ``want`` votes; note (redrawn at, count)."""
    while p.count < want and time.perf_counter() < deadline:
        await asyncio.sleep(POLL_S)
        await p.poll()
        shown.append((time.perf_counter(), p.count))


def to_projector(taps: list[tuple[float, float]], shown: list[tuple[float, int]]) -> list[float]:
    """Per vote (in the order the server confirmed them): seconds from its tap until the first redraw
    that counts at least that many votes and ended after it was confirmed."""
    out = []
    for k, (sent, done) in enumerate(sorted(taps, key=lambda t: t[1]), 1):
        at = next((t for t, n in shown if n >= k and t >= done), None)
        if at is not None:
            out.append(at - sent)
    return out


async def bench(args: argparse.Namespace, port: int, pid: int) -> dict[str, Any]:
    """The projector, then the students and the phones at once; timings, errors and memory."""
    projector = Tab(port, args.timeout)
    students = [Session(port, args.timeout) for _ in range(args.students)]
    phones = [Tab(port, args.timeout) for _ in range(args.phones)]
    taps: list[tuple[float, float]] = []
    shown: list[tuple[float, int]] = []
    steps: list[float] = []
    errors: list[str] = []
    await projector.open()
    await page(projector, "lesson", "ls_stop=7&ls_vote=true")  # starts the room, loads the lesson's models
    code = dict(kv.split("=", 1) for kv in projector.query.split("&")).get("ls_room", "")
    warm = Session(port, args.timeout)
    await warm.open()
    await warm.run()  # the stepper's model, untimed
    await warm.close()
    baseline = await settle(port, pid, args.ttl)
    peak, stop = [baseline], asyncio.Event()
    sampler = asyncio.create_task(sample_rss(pid, peak, stop))
    t0, cpu0 = time.perf_counter(), cpu_s(pid)
    try:
        await asyncio.gather(*(s.open() for s in [*students, *phones]))
        await asyncio.gather(*(s.run() for s in students),
                             *(page(p, "vote", f"room={code}&v=phone{k}") for k, p in enumerate(phones)))
        deadline = time.perf_counter() + args.spread + 120
        results = await asyncio.gather(
            *(drive(s, args.steps, 0.0, random.Random(k), steps, 2.0) for k, s in enumerate(students)),
            *(phone(p, args.spread, time.perf_counter() + 2 * args.steps, random.Random(1000 + k), taps)
              for k, p in enumerate(phones)),
            watch(projector, len(phones), shown, deadline), return_exceptions=True)
        errors += [f"{type(r).__name__}: {r}" for r in results if isinstance(r, BaseException)]
    except Exception as e:  # a dead server or a timeout ends the run, not the script
        errors.append(f"run aborted: {type(e).__name__}: {e}")
    finally:
        wall, cpu = time.perf_counter() - t0, cpu_s(pid) - cpu0
        await asyncio.gather(*(s.close() for s in [projector, *students, *phones]), return_exceptions=True)
        stop.set()
        await sampler
    errors += [e for s in [projector, *students, *phones] for e in s.errors]
    return {"phones": args.phones, "students": args.students, "votes_counted": projector.count,
            "tap": summarize([d - t for t, d in taps]), "tap_to_projector": summarize(to_projector(taps, shown)),
            "step": summarize(steps), "wall_s": round(wall, 1), "server_cpu_util": round(cpu / max(wall, 1e-9), 2),
            "errors": len(errors), "error_samples": sorted(set(errors))[:5],
            "rss_mib": {"before": baseline, "peak": peak[0], "after": await settle(port, pid, args.ttl)}}


def main(argv: list[str] | None = None) -> None:
    """Run the bench on a server of its own and write the JSON."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--phones", type=int, default=60)
    p.add_argument("--students", type=int, default=30)
    p.add_argument("--steps", type=int, default=10, help="Step presses per student, one every 2 s")
    p.add_argument("--spread", type=float, default=20.0, help="the phones tap within this many seconds")
    p.add_argument("--timeout", type=float, default=120.0)
    p.add_argument("--ttl", type=float, default=5.0, help="server.disconnectedSessionTTL (s)")
    p.add_argument("--json", type=Path)
    a = p.parse_args(argv)
    env = {"RNNSEARCH_CHECKPOINTS": os.environ.get("RNNSEARCH_CHECKPOINTS", str(ROOT / "checkpoints")),
           "OMP_NUM_THREADS": "1"}
    with running_app(env=env, options=[f"server.disconnectedSessionTTL={a.ttl:g}"],
                     timeout=300) as app:
        load0 = round(os.getloadavg()[0], 2)
        result = {"machine": machine(), "loadavg_1min_before": load0,
                  **asyncio.run(bench(a, app.port, app.proc.pid)),
                  "loadavg_1min_after": round(os.getloadavg()[0], 2)}
    print(json.dumps(result, indent=1))
    if a.json:
        a.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
