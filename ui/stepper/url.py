"""The stepper's view in the URL, kept the way every page keeps its own.

The controls are bound to the URL (``bind="query-params"``), each under its session key, which carries
the page's prefix (:data:`ui.stepper.state.PREFIX`: ``sp_text``, ``sp_model``, ``sp_mode`` …), and persist
for the session. The two parts of the view that are not controls, the position and the forced words, are
written beside them (``sp_step``, ``sp_force``) by :func:`write_position`. Three things the binding alone
does not do are done here: opening links written before the prefix (``?text=…&step=…``: each old name is
read where its new one is absent, and on a session's first view moved to the new name), opening links
shared before the controls were bound (flags written ``1``/``0``; the bound controls read only
``true``/``false``), and putting values chosen by code (the default preset, such an old link) into the
address bar on a session's first view.
"""

from __future__ import annotations

import streamlit as st

from ui.common.widgets import BIND
from ui.figures import stepper_state as vs
from ui.figures.subword_view import VIEWS as HEATMAP_OF
from ui.stepper import state

BOUND_KEYS = ("text", "model", "mode", "beam", "norm", "freeze", "ablation", "present", "paper", "unk", "ens",
              "cand", "cand_k", "temp", "topk", "topp", "seed", "app_rules")
"""The controls seeded from the URL on a session's first view; each is the :class:`~ui.figures.stepper_state.View`
field of that name (its URL parameter: :func:`param`)."""

URL_NAMES = (*state.BOUND_NAMES, "step", "force", "words")
"""Every part of the view in the URL, by its View name (the old links' parameter names)."""

BOUND = {"bind": BIND, "persist_state": "session"}
"""Keyword arguments of a control kept in the URL and for the whole session (across pages)."""


def param(name: str) -> str:
    """The URL parameter of the view's part ``name``: the stepper's prefix and the name (``sp_text``); a bound
    control's parameter is its session key."""
    if name not in URL_NAMES:
        raise KeyError(f"{name!r} is not a part of the stepper's view in the URL")
    return state.PREFIX + name


def query() -> dict[str, list[str]]:
    """The stepper's part of the URL's query, every value as a list, by the View's names: a parameter of a
    link from before the prefix (``text``) is read where its new one (``sp_text``) is absent."""
    raw = vs.query_snapshot(st.query_params)
    out = {}
    for name in URL_NAMES:
        for p in (param(name), name):
            if p in raw:
                out[name] = raw[p]
                break
    return out


def move_old_names() -> None:
    """On a session's first view, put an old link's parameters (``text=…``) under their new names
    (``sp_text=…``), so the bound controls read them and the address bar shows one form."""
    for name in URL_NAMES:
        new = param(name)
        if new == name or name not in st.query_params:
            continue
        values = st.query_params.get_all(name)
        del st.query_params[name]
        if new not in st.query_params:
            st.query_params[new] = values


def view_from_url() -> vs.View:
    """The view the URL asks for, read tolerantly (junk falls back, old names and ``1``/``0`` flags are read)."""
    return vs.view_from_query(query())


def seed_controls(view: vs.View) -> None:
    """Set every bound control from ``view`` before it is first drawn in a session.

    The bound controls would read their own parameters, but only in the form they write; seeding
    them from the tolerant reading also opens older links and cuts junk (a URL value a control
    accepts still wins)."""
    for k in BOUND_KEYS:
        state.put(k, getattr(view, k))
    state.put("w_pieces", HEATMAP_OF[int(view.words)])  # a subword model's Pieces / Words switch
    if view.fusion != "none":  # drawn only when a language model fits the model (ui.stepper.fusion_panel)
        state.put("fusion", view.fusion)
    if view.beta is not None:
        state.put("beta", view.beta)


def presenting() -> bool:
    """Whether presentation mode is on (also before the session is set up: read from the URL)."""
    if state.has("present"):
        return state.present()
    return view_from_url().present


def restate_controls() -> None:
    """Set every bound control's value from code at the top of each run.

    A bound control writes a value set from code into the URL when it differs from what the URL
    holds, so the address bar stays equal to the controls even for values the code chose (the
    default preset, an old ``freeze=1`` link; :func:`sync_once` gives those the run they need).
    The values themselves survive runs and pages without this: the controls persist per session.
    """
    state.restate(BOUND_KEYS)


def sync_once() -> None:
    """Have the browser run the page once more after a session's first run, so that the URL shows
    the view at once.

    A bound control puts a value set from code into the URL only in a run after one that completed
    with it drawn, and a ``st.rerun`` inside the first run does not complete it. So the first run
    draws a fragment that reruns by itself a moment later and asks for a full run, in which
    :func:`restate_controls` writes them all. Later runs do not draw it, which stops its timer."""
    if state.get("_url_synced"):
        return

    @st.fragment(run_every=0.2)
    def resync() -> None:
        if state.get("_url_sync_drawn"):  # the timer's run, after the first run completed
            state.put("_url_synced", True)
            st.rerun(scope="app")
        state.put("_url_sync_drawn", True)

    resync()


def current_view(group_name: str) -> vs.View:
    """The view as a share link records it (the position and forced words from the session)."""
    beta = state.get("beta") if state.get("fusion") == "shallow" else None
    return vs.View(**{k: state.get(k) for k in BOUND_KEYS if k != "model"}, model=group_name, step=state.pos(),
                   plan=dict(state.plan()), fusion=state.get("fusion") or "none",
                   beta=None if beta is None else float(beta), words=state.get("w_pieces") == HEATMAP_OF[1])


def link_query(view: vs.View) -> dict[str, str | list[str]]:
    """The query of a link to ``view`` in the stepper's own parameters (``sp_text=…``)."""
    return {param(k): v for k, v in vs.view_to_query(view).items()}


def write_position() -> None:
    """Put the position, the forced words and a subword model's Words view into the URL, beside the bound
    controls' parameters (only what changed: each write is a message to the browser)."""
    want = {"step": [str(state.pos())], "force": vs.format_plan(state.plan()),
            "words": ["true"] if state.get("w_pieces") == HEATMAP_OF[1] else []}
    for name, values in want.items():
        key = param(name)
        if st.query_params.get_all(key) == values:
            continue
        if values:
            st.query_params[key] = values
        else:
            del st.query_params[key]
