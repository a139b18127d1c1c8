"""Helpers and fixtures for the stepper page's AppTests (tests/test_app_stepper*.py).

The app reads the tiny RNNsearch / RNNencdec pair of ``tiny_checkpoint_dir`` through the
``RNNSEARCH_CHECKPOINTS`` environment variable.
"""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from nmt.decoding.trace import DecodeTrace

APP = Path(__file__).resolve().parent.parent / "app.py"
SENTENCE = "A man is riding a bike."


def start(query: dict[str, str | list[str]] | None = None) -> AppTest:
    """A fresh session of the app (optionally opened from a URL's query parameters), run once."""
    at = AppTest.from_file(str(APP), default_timeout=60)
    if query:
        at.query_params.update(query)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def click(at: AppTest, key: str) -> AppTest:
    at.button(key=key).click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def set_text(at: AppTest, text: str) -> AppTest:
    at.text_area(key="sp_text").set_value(text).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def trace(at: AppTest) -> DecodeTrace:
    """The trace the page shows (greedy: the session's stepper)."""
    return at.session_state["sp__stepper"][1].trace


def qp(at: AppTest, key: str) -> list[str]:
    """All values of a query parameter after the last run (AppTest gives str or list)."""
    v = at.query_params.get(key, [])
    return [v] if isinstance(v, str) else list(v)


def link(at: AppTest) -> dict[str, list[str]]:
    """The query of the page's "Link to this view" (the Share and export tab), parsed.

    The controls' own parameters are written into the address bar by the browser (they are bound
    to it), which AppTest does not run; the share link carries the same view in the same form."""
    from urllib.parse import parse_qs, urlsplit

    open_tab(at, "Share and export")
    return parse_qs(urlsplit(at.code[0].value).query)


def html_bodies(at: AppTest) -> list[str]:
    return [h.proto.body for h in at.get("html")]


def chart_count(at: AppTest) -> int:
    return len(at.get("vega_lite_chart"))


def specs(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]


def chart_rows(at: AppTest, k: int) -> list[dict]:
    """The data rows of the k-th chart (Streamlit sends them beside the spec, as Arrow tables)."""
    import pyarrow as pa

    proto = at.get("vega_lite_chart")[k].proto
    return [row for d in proto.datasets for row in pa.ipc.open_stream(d.data.data).read_all().to_pylist()]


def open_tab(at: AppTest, name: str) -> AppTest:
    """Open one of the tabs under the stepper (only the open one is built)."""
    at.session_state["sp_w_tab"] = name
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def force_pills(at: AppTest) -> list:
    """The top-k panel's pills that force a candidate (key ``sp_force_<nonce>``): none, or one per view."""
    return [p for p in at.pills if str(p.key).startswith("sp_force_")]


def step_view(at: AppTest) -> object:
    """The block of the page that a Step redraws (the decoding view's fragment: it holds the Step button)."""

    def keys(node: object) -> list[object]:
        return [getattr(node, "key", None), *(k for c in getattr(node, "children", {}).values() for k in keys(c))]

    return next(c for c in at.main.children.values() if "sp_btn_step" in keys(c))


def drawn(node: object) -> int:
    """How many elements and blocks ``node`` holds, itself included: one ForwardMsg each when it is drawn."""
    return 1 + sum(drawn(c) for c in getattr(node, "children", {}).values())


def body(at: AppTest, testid: str) -> str:
    """The HTML snippet with ``data-testid=testid``."""
    return next(b for b in html_bodies(at) if f'data-testid="{testid}"' in b)
