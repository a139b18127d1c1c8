"""Start the app (``streamlit run app.py``) on a free loopback port for a browser test, a benchmark
or a screenshot, and stop it afterwards.

    with running_app(env={"RNNSEARCH_CHECKPOINTS": "…"}) as app:
        page.goto(app.url)

Used by ``tests/test_browser.py``, ``bench/app_stepper.py``, ``bench/load.py`` and
``scripts/screenshot.py`` (the last three put the repository root on ``sys.path`` first).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"  # loopback only, by design
FLAGS = ("--server.headless", "true", "--server.fileWatcherType", "none")


@dataclass(frozen=True)
class App:
    """A running server: its base URL and its process (for its pid, RSS and CPU time)."""

    url: str
    port: int
    proc: subprocess.Popen[bytes]


def free_port() -> int:
    """A free TCP port on the loopback interface."""
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def _healthy(url: str) -> bool:
    """Whether Streamlit's health endpoint answers 200 (straight to loopback, whatever the proxy says)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"{url}/_stcore/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Terminate the server, killing it if it does not stop within 10 s."""
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


@contextlib.contextmanager
def running_app(env: Mapping[str, str] | None = None, options: Sequence[str] = (), log_dir: Path | None = None,
                timeout: float = 60.0) -> Iterator[App]:
    """The app on a free port with ``env`` added to this process's environment and ``options``
    (``server.x=y``) given as ``--server.x y`` flags; yields once it answers its health check.

    The server's output goes to ``log_dir/streamlit-PORT.log`` (else a temporary file); a server that exits or does not
    answer within ``timeout`` seconds raises :class:`RuntimeError` with the end of that output."""
    port = free_port()
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", *FLAGS, "--server.address", HOST,
           "--server.port", str(port), *(f"--{o}" for o in options)]
    with contextlib.ExitStack() as stack:
        log = log_dir / f"streamlit-{port}.log" if log_dir else None
        out: IO[bytes] = stack.enter_context(log.open("w+b") if log else tempfile.TemporaryFile())
        proc = subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, **(env or {})}, stdout=out,
                                stderr=subprocess.STDOUT)
        stack.callback(stop, proc)
        url = f"http://{HOST}:{port}"
        deadline = time.monotonic() + timeout
        while not _healthy(url):
            if proc.poll() is not None or time.monotonic() > deadline:
                out.seek(0)
                tail = out.read()[-2000:].decode(errors="replace")
                raise RuntimeError(f"streamlit did not start (exit {proc.poll()}):\n{tail}")
            time.sleep(0.3)
        yield App(url, port, proc)
