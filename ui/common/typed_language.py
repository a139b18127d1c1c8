"""Which language a typed sentence is in, as the models see it: how many of its words a checkpoint's source
vocabulary holds (:func:`ui.common.models.typed_group` sends French typed to the French→English pair this way).

No language-identification library: the choice is only ever between the checkpoints in the folder, and
their own vocabularies answer it for the words they can translate.
"""

from __future__ import annotations

import streamlit as st

from nmt.models import checkpoint
from nmt.text.tokenize import SUPPORTED_LANGS, Tokenizer


def known_words(path: str, mtime: float, text: str) -> int:
    """How many of ``text``'s tokens (the checkpoint's own source tokeniser, case ignored) its source
    vocabulary holds; 0 for an unreadable checkpoint."""
    lang, vocab = _source_words(path, mtime)
    if not lang:
        return 0
    return sum(t.lower() in vocab for t in Tokenizer(lang).tokenize(text))


@st.cache_data(show_spinner=False, max_entries=16)
def _source_words(path: str, mtime: float) -> tuple[str, frozenset[str]]:
    """A checkpoint's source language and its source vocabulary lower-cased ('' and none if unreadable)."""
    try:
        ckpt = checkpoint.read_checkpoint(path, mmap=True)
    except Exception:  # an unreadable file is left out of the pickers already; it knows no words here
        return "", frozenset()
    lang = str(ckpt.get("src_lang") or "")
    if lang not in SUPPORTED_LANGS:
        return "", frozenset()
    return lang, frozenset(w.lower() for w in ckpt.get("src_vocab") or ())
