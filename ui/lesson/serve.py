"""The app's server for ``python -m nmt serve`` (which starts this module): Streamlit with this run's
allowed host names, every HTTP answer guarded by them, and the models warmed before "ready".

    python -m ui.lesson.serve --port 8501 --address 0.0.0.0 --allow localhost --allow 192.168.1.20 \
        --phones http://192.168.1.20:8501

Streamlit checks ``server.allowedHosts`` on its websocket only; its pages and ``/_stcore/metrics``
answer any ``Host``. :class:`HostGuard` refuses an HTTP request whose ``Host`` is outside the same
list (403), so a page of another site that points its own name at this machine (DNS rebinding)
reads nothing. The options are given to Streamlit as its command-line flags are, for this run only:
``.streamlit/config.toml`` is not edited, and ``streamlit run app.py`` keeps its closed defaults.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PHONES_ENV = "RNNSEARCH_PHONES_URL"  # the address the projector shows phones (set by this module)
CLASS_ENV = "RNNSEARCH_CLASS"  # "1": served to the network for a class (the phones' address is reachable)


class HostGuard:
    """ASGI middleware: an HTTP request whose ``Host`` is not allowed gets 403 and nothing else (the
    websocket keeps Streamlit's own check, which uses the same list)."""

    def __init__(self, app: Callable[..., Any]) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        from streamlit.web.server.starlette.starlette_websocket import is_host_allowed

        if scope.get("type") == "http":
            host = next((v.decode("latin-1") for k, v in scope.get("headers", []) if k == b"host"), None)
            if not is_host_allowed(host):
                await send({"type": "http.response.start", "status": 403,
                            "headers": [(b"content-type", b"text/plain; charset=utf-8")]})
                await send({"type": "http.response.body", "body": b"This host name is not served here.\n"})
                return
        await self.app(scope, receive, send)


def install_host_guard() -> None:
    """Put :class:`HostGuard` first in the middleware of the Starlette app Streamlit builds."""
    from starlette.middleware import Middleware
    from streamlit.web.server.starlette import starlette_app

    made = starlette_app.create_streamlit_middleware

    def guarded() -> list[Middleware]:
        return [Middleware(HostGuard), *made()]

    starlette_app.create_streamlit_middleware = guarded


def healthy(port: int) -> bool:
    """Whether the server answers its health check on loopback (as ``localhost``)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    req = urllib.request.Request(f"http://127.0.0.1:{port}/_stcore/health", headers={"Host": f"localhost:{port}"})
    try:
        with opener.open(req, timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def warm() -> int:
    """Load every model the Lesson's stops and the stepper's first view open, and decode each stop's
    sentence once (the same caches the pages use); the number of traces made."""
    from ui.common import checkpoint_files, models
    from ui.common import widgets as W
    from ui.lesson import page as P
    from ui.lesson.content import STOPS

    logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").setLevel(logging.ERROR)
    made = 0
    groups = checkpoint_files.scan(models.checkpoint_dir())
    first = models.default_group(groups)
    if first is not None and first.search is not None:
        W.load_lm(first.search)
    for stop in STOPS:
        group = P.model_pair(stop.group, warn=False)
        if group is None or not stop.sentence:
            continue
        for ckpt in (group.search, group.encdec):
            if ckpt is not None and W.load_lm(ckpt) is not None:
                P.trace_of(ckpt, stop.sentence)
                made += 1
    return made


def announce(port: int, phones: str, started: float) -> None:
    """Wait for the server, warm the models, then print the projector's and the phones' addresses."""
    while not healthy(port):
        time.sleep(0.3)
    try:
        traces = warm()
    except Exception as err:  # a cold start is slower, not broken
        print(f"warning: could not warm the models ({type(err).__name__}: {err})", flush=True)
        traces = 0
    print(f"ready: open http://localhost:{port}/lesson on the projector "
          f"({traces} lesson views warmed in {time.monotonic() - started:.0f} s)", flush=True)
    print(f"phones: {phones}/vote (the projector shows it, with the room code and a QR code)", flush=True)


def main(argv: list[str] | None = None) -> None:
    """Start the server (blocks until it is stopped)."""
    p = argparse.ArgumentParser(prog="python -m ui.lesson.serve", description=__doc__.split("\n\n")[0])
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--address", default="127.0.0.1")
    p.add_argument("--allow", action="append", default=[], help="a host name the server answers to")
    p.add_argument("--phones", default="", help="the base address phones open")
    a = p.parse_args(argv)
    started = time.monotonic()
    os.environ[PHONES_ENV] = a.phones
    if a.address != "127.0.0.1":
        os.environ[CLASS_ENV] = "1"
    install_host_guard()
    os.chdir(ROOT)
    threading.Thread(target=announce, args=(a.port, a.phones or f"http://localhost:{a.port}", started),
                     daemon=True).start()
    from streamlit import config
    from streamlit.web import bootstrap

    flags = {"server_address": a.address, "server_port": a.port, "server_headless": True,
             "server_fileWatcherType": "none", "server_allowedHosts": list(a.allow),
             "server_runOnSave": False}
    script = str(ROOT / "app.py")
    config._main_script_path = script  # as `streamlit run` does: the config and secrets beside the app
    bootstrap.load_config_options(flag_options=flags)
    bootstrap.run(script, False, [], flags)


if __name__ == "__main__":
    sys.exit(main())
