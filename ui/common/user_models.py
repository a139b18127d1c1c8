"""The user's own models (e.g. imported from JoeyNMT): a second folder the pickers list as "Your models".

The folder is named by the environment variable ``RNNSEARCH_USER_MODELS`` when the server is started
(``RNNSEARCH_USER_MODELS=my-models streamlit run app.py``); nothing a visitor sends (a URL, a text
box) can name another. Its ``*.pt`` files are judged as the checkpoint folder's are
(:mod:`ui.common.checkpoint_files`: links out of it refused, a file that is not an intact sealed checkpoint
left out and named once, with why) and grouped as they are (:func:`ui.common.checkpoint_files.scan`). A group whose
name a checkpoint-folder group already has is left out, and said so, rather than shadowing it.

:func:`all_groups` is what every picker lists: the checkpoint folder's groups, then the user's.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import streamlit as st

from nmt.text.corpora import resolved, shown
from ui.common import checkpoint_files, models
from ui.figures.common import md

ENV_VAR = "RNNSEARCH_USER_MODELS"
LABEL = "Your models"
ORIGIN_HELP = "Where the model came from: trained by this project (on which corpus), or imported from another toolkit."


def folder() -> Path | None:
    """The user's models folder the server was started with (``$RNNSEARCH_USER_MODELS``), or None.

    None also when it is the checkpoint folder itself (its models are listed once, as the folder's)."""
    env = os.environ.get(ENV_VAR, "").strip()
    if not env:
        return None
    path = Path(env)
    real = resolved(path)
    same = real is not None and real == resolved(models.checkpoint_dir())
    return None if same else path


def _split() -> tuple[list[models.ModelGroup], list[models.ModelGroup], list[models.ModelGroup]]:
    """(the checkpoint folder's groups, the user's groups listed, the user's groups left out for their name)."""
    shipped = checkpoint_files.scan(models.checkpoint_dir())
    user = folder()
    if user is None:
        return shipped, [], []
    taken = {g.name for g in shipped}
    yours = checkpoint_files.scan(user, yours=True)
    return shipped, [g for g in yours if g.name not in taken], [g for g in yours if g.name in taken]


def all_groups() -> list[models.ModelGroup]:
    """Every model group a picker offers: the checkpoint folder's (sorted by name), then the user's."""
    shipped, yours, _ = _split()
    return shipped + yours


def notes() -> list[str]:
    """One line per file of the user's folder left out of the pickers, and why (none without the folder)."""
    user = folder()
    if user is None:
        return []
    clashes = [f"left out: {c.name} has the name of a model in the checkpoint folder ({g.name}); rename it"
               for g in _split()[2] for c in g.members]
    return checkpoint_files.notes(user, "your models folder") + clashes


def label(name: str, groups: list[models.ModelGroup]) -> str:
    """A picker's label of a group or checkpoint name: ``Your models › NAME`` for the user's, else the name;
    a model that does not translate the app's first pair (English→French) says its direction, read from the
    checkpoint: ``NAME · fr→en``. (en→fr labels stay bare: a bound picker's URL holds its label, and every link
    shared before the fr→en models came names an en→fr model by its bare label.)"""
    return labeller(groups)(name)


def labeller(groups: list[models.ModelGroup]) -> Callable[[str], str]:
    """:func:`label` for the names of one list of groups, its index built once (a picker's ``format_func``: with
    200 models, building it per option was 200 × 200 look-ups a picker, issue 52)."""
    yours = {g.name for g in groups if g.yours} | {c.name for g in groups if g.yours for c in g.members}
    first: dict[str, models.CheckpointInfo] = {}
    for g in groups:
        for c in g.members:
            first.setdefault(g.name, c)
            first.setdefault(c.name, c)

    def label_of(name: str) -> str:
        shown_name = f"{LABEL} › {name}" if name in yours else name
        direction = models.direction(first.get(name))
        return f"{shown_name} · {direction}" if direction and direction != models.FIRST_DIRECTION else shown_name

    return label_of


def folder_expander() -> None:
    """In the sidebar: the user's models folder (as the pages may show it) and each file of it left out, once."""
    user = folder()
    if user is None:
        return
    with st.expander(LABEL):
        st.caption(f"Folder: {md(shown(user))} (set by {ENV_VAR})")
        for line in notes():
            st.caption(md(line))
