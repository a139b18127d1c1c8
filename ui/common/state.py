"""The session-state keys that belong to no single page, and the rule every page's keys follow.

Each page package keeps its keys in its own ``ui/<page>/state.py`` (a ``PREFIX`` and the ``KEYS`` it uses).
The helpers of ui/common that keep something per widget derive their key from the page's own widget key (so it
carries the page's prefix): :data:`DERIVED_SUFFIXES` lists the endings they add. What is kept for the whole app
rather than a page carries :data:`PREFIX`.
"""

from __future__ import annotations

PREFIX = "app_"
"""The prefix of a key kept for the whole app, whichever page wrote it."""

RULES_OF = "app_rules_of"
"""Checkpoint path → True where the reader switched that imported model to this app's search rules
(:mod:`ui.common.search_rules`): one choice, held across pages."""

KEYS = frozenset({RULES_OF})
"""Every key of the whole app (not of a page) a ui/common module writes."""

DERIVED_SUFFIXES = ("_by_hand", "_typed", "_typed_to", "_done")
"""Endings ui/common adds to a page's widget key: ``_by_hand``, ``_typed`` and ``_typed_to`` (a model picker's
hand choice and a typed sentence's switch, :mod:`ui.common.typed`), ``_done`` (a run button's last request,
:func:`ui.common.widgets.run_button`)."""

PANEL_KEYS = ("why_alt", "why_word", "why_run", "why_dl_*")
"""Keys a shared panel makes after the page's prefix (``ex_why_alt``): the "Why this word?" panel
(:mod:`ui.common.contrast_panel`); a pattern ending in ``*`` stands for a family."""


def made_for(prefix: str) -> frozenset[str]:
    """The keys (and ``*`` patterns) the shared panels make on the page whose keys begin with ``prefix``."""
    return frozenset(prefix + k for k in PANEL_KEYS)
