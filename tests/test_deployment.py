"""The classroom defaults: the server answers only to local host names, and the README says how to
add the one a class uses, how to start the server on a shared machine, and what to do about metrics."""

from __future__ import annotations

import socket
import tomllib
from pathlib import Path

import pytest
from streamlit import config
from streamlit.web.server.starlette.starlette_websocket import is_host_allowed

from scripts.app_server import running_app

ROOT = Path(__file__).resolve().parent.parent
LOCAL = ["localhost", "127.0.0.1", "::1"]


def test_only_local_host_names_are_allowed() -> None:
    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert cfg["server"]["allowedHosts"] == LOCAL


@pytest.mark.parametrize("host,allowed", [
    ("localhost:8501", True), ("127.0.0.1:8501", True), ("[::1]:8501", True), ("LOCALHOST", True),
    ("attacker.example.com:8501", False), ("localhost.attacker.example.com", False), ("192.168.1.20:8501", False),
    (None, False),
])
def test_streamlit_applies_the_list_to_the_host_header(host: str | None, allowed: bool) -> None:
    """Streamlit's own check of a connection's Host header under the shipped list (DNS rebinding)."""
    before = config.get_option("server.allowedHosts")
    config.set_option("server.allowedHosts", LOCAL)
    try:
        assert is_host_allowed(host) is allowed
    finally:
        config.set_option("server.allowedHosts", before)


def test_the_readme_says_how_to_run_it_for_a_class() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Running it for a class on a shared machine\n", 1)[1].split("\n## ", 1)[0]
    for needed in ("python -m nmt serve --class", "--host", "--port", "allowedHosts", "/_stcore/metrics",
                   "room", "QR code", "<!-- begin: classroom -->"):
        assert needed in section, needed


def _upgrade_status(port: int, host: str) -> str:
    """The status line a WebSocket upgrade to the app's stream gets when sent with ``host`` as Host."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall((f"GET /_stcore/stream HTTP/1.1\r\nHost: {host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                   "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n").encode())
        return s.recv(200).decode("latin-1").split("\r\n", 1)[0]


def test_the_running_server_refuses_another_host_name() -> None:
    """The real server started from this folder reads the list: a foreign Host gets no connection."""
    with running_app() as app:
        assert _upgrade_status(app.port, f"127.0.0.1:{app.port}") == "HTTP/1.1 101 Switching Protocols"
        assert _upgrade_status(app.port, f"localhost:{app.port}") == "HTTP/1.1 101 Switching Protocols"
        assert _upgrade_status(app.port, "rebound.example.com") == "HTTP/1.1 403 Forbidden"
