"""Serve the app: ``python -m nmt serve [--class] [--host NAME] [--port N]``.

Without ``--class`` the server listens on this machine only (``127.0.0.1``), as ``streamlit run app.py``
does with the repository's closed defaults. With ``--class`` it listens on every interface, finds this
machine's addresses on the local network, and answers to exactly those, each ``--host`` name (the
name the class types, e.g. ``nmt-lab.example.org``) and the local names, for this run only (no file is
edited). Both ways the server is headless, watches no files, refuses any request whose ``Host`` is not
allowed (pages and ``/_stcore/metrics`` too, not only the websocket), warms the models the Lesson and
the stepper open, then prints ``ready: open http://localhost:PORT/lesson on the projector`` and the
address the phones open. The server itself is :mod:`ui.lesson.serve` (this layer imports no Streamlit).
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import socket
import sys

LOCAL_NAMES = ("localhost", "127.0.0.1", "::1")


def lan_addresses() -> list[str]:
    """This machine's IPv4 addresses on its networks (no loopback), the outgoing one first.

    A UDP socket's ``connect`` picks the outgoing interface without sending anything; the host name's
    addresses add the others."""
    found: list[str] = []
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))
            found.append(s.getsockname()[0])
    except OSError:
        pass
    try:
        found += socket.gethostbyname_ex(socket.gethostname())[2]
    except OSError:
        pass
    out: list[str] = []
    for a in found:
        ip = ipaddress.ip_address(a)
        if not (ip.is_loopback or ip.is_unspecified or ip.is_link_local) and a not in out:
            out.append(a)
    return out


def allowed_hosts(hosts: list[str], lan: list[str]) -> list[str]:
    """The names the server answers to: the local names, then the ``--host`` names, then the LAN
    addresses (each once, lower case)."""
    out: list[str] = []
    for h in [*LOCAL_NAMES, *hosts, *lan]:
        h = h.strip().lower().rstrip(".")
        if h and h not in out:
            out.append(h)
    return out


def phones_url(hosts: list[str], lan: list[str], port: int) -> str:
    """The base address phones open: the first ``--host`` name, else the first LAN address, else
    ``localhost`` (a server for this machine only)."""
    host = (hosts or lan or ["localhost"])[0]
    return f"http://{host}:{port}"


def parser() -> argparse.ArgumentParser:
    """The command's options."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    p.add_argument("--class", dest="klass", action="store_true",
                   help="serve a class: listen on every interface and answer to this machine's network addresses")
    p.add_argument("--host", action="append", default=[], metavar="NAME",
                   help="a name the class opens the app by (repeatable; with --class)")
    p.add_argument("--port", type=int, default=8501, help="the port (default 8501)")
    return p


def main(argv: list[str] | None = None) -> int:
    """Check the options, then become the server (``python -m ui.lesson.serve``)."""
    a = parser().parse_args(argv)
    problem = ("--port must be between 1 and 65535" if not 0 < a.port < 65536 else
               "--host needs --class (without it the server answers to this machine only)" if a.host and not a.klass
               else None)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    lan = lan_addresses() if a.klass else []
    hosts = allowed_hosts(a.host, lan)
    cmd = [sys.executable, "-m", "ui.lesson.serve", "--port", str(a.port),
           "--address", "0.0.0.0" if a.klass else "127.0.0.1",
           "--phones", phones_url(a.host, lan, a.port), *(f"--allow={h}" for h in hosts)]
    if a.klass:
        print(f"serving a class on port {a.port}; answering to: {', '.join(hosts)}", flush=True)
    sys.stdout.flush()
    os.execv(sys.executable, cmd)  # the server keeps this process's id, so stopping it stops the server
    return 0  # pragma: no cover (execv does not return)
