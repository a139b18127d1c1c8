"""The stepper's view in the URL, kept the way every page keeps its own.

The controls are bound to the URL (``bind="query-params"``, each under its own key: ``text``,
``model``, ``mode`` …) and persist for the session. The two parts of the view that are not
controls, the position and the forced words, are written beside them (``step``, ``force``) by
:func:`write_position`. Two things the binding alone does not do are done here: opening links
shared before the controls were bound (flags written ``1``/``0``; the bound controls read only
``true``/``false``), and putting values chosen by code (the default preset, such an old link) into
the address bar on a session's first view.
"""

from __future__ import annotations

import streamlit as st

from ui.common.widgets import BIND
from ui.figures import stepper_state as vs
from ui.figures.subword_view import VIEWS as HEATMAP_OF

BOUND_KEYS = ("text", "model", "mode", "beam", "norm", "freeze", "ablation", "present", "paper", "unk", "ens",
              "cand", "cand_k", "temp", "topk", "topp", "seed", "app_rules")
"""The controls kept in the URL; each is the :class:`~ui.figures.stepper_state.View` field of that name."""

BOUND = {"bind": BIND, "persist_state": "session"}
"""Keyword arguments of a control kept in the URL and for the whole session (across pages)."""

ss = st.session_state


def query() -> dict[str, list[str]]:
    """The URL's query parameters, every value as a list."""
    return vs.query_snapshot(st.query_params)


def view_from_url() -> vs.View:
    """The view the URL asks for, read tolerantly (junk falls back, old ``1``/``0`` flags are read)."""
    return vs.view_from_query(query())


def seed_controls(view: vs.View) -> None:
    """Set every bound control from ``view`` before it is first drawn in a session.

    The bound controls would read their own parameters, but only in the form they write; seeding
    them from the tolerant reading also opens older links and cuts junk (a URL value a control
    accepts still wins)."""
    for k in BOUND_KEYS:
        ss[k] = getattr(view, k)
    ss["w_pieces"] = HEATMAP_OF[int(view.words)]  # a subword model's Pieces / Words switch


def presenting() -> bool:
    """Whether presentation mode is on (also before the session is set up: read from the URL)."""
    if "present" in ss:
        return bool(ss["present"])
    return view_from_url().present


def restate_controls() -> None:
    """Set every bound control's value from code at the top of each run.

    A bound control writes a value set from code into the URL when it differs from what the URL
    holds, so the address bar stays equal to the controls even for values the code chose (the
    default preset, an old ``freeze=1`` link; :func:`sync_once` gives those the run they need).
    The values themselves survive runs and pages without this: the controls persist per session.
    """
    for k in BOUND_KEYS:
        if k in ss:
            ss[k] = ss[k]


def sync_once() -> None:
    """Have the browser run the page once more after a session's first run, so that the URL shows
    the view at once.

    A bound control puts a value set from code into the URL only in a run after one that completed
    with it drawn, and a ``st.rerun`` inside the first run does not complete it. So the first run
    draws a fragment that reruns by itself a moment later and asks for a full run, in which
    :func:`restate_controls` writes them all. Later runs do not draw it, which stops its timer."""
    if ss.get("_url_synced"):
        return

    @st.fragment(run_every=0.2)
    def resync() -> None:
        if ss.get("_url_sync_drawn"):  # the timer's run, after the first run completed
            ss["_url_synced"] = True
            st.rerun(scope="app")
        ss["_url_sync_drawn"] = True

    resync()


def current_view(group_name: str) -> vs.View:
    """The view as a share link records it (the position and forced words from the session)."""
    beta = ss.get("beta") if ss.get("fusion") == "shallow" else None
    return vs.View(**{k: ss[k] for k in BOUND_KEYS if k != "model"}, model=group_name, step=ss["pos"],
                   plan=dict(ss["plan"]), fusion=ss.get("fusion") or "none",
                   beta=None if beta is None else float(beta), words=ss.get("w_pieces") == HEATMAP_OF[1])


def write_position() -> None:
    """Put the position, the forced words and a subword model's Words view into the URL, beside the bound
    controls' parameters
    (only what changed: each write is a message to the browser)."""
    want = {"step": [str(ss["pos"])], "force": vs.format_plan(ss["plan"]),
            "words": ["true"] if ss.get("w_pieces") == HEATMAP_OF[1] else []}
    for key, values in want.items():
        if st.query_params.get_all(key) == values:
            continue
        if values:
            st.query_params[key] = values
        else:
            del st.query_params[key]
