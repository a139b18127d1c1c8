"""The alignment browser's pairs: a split of the data folders (with its gold links when it is an alignment set),
or pairs pasted or uploaded by the visitor (errors shown as messages).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import streamlit as st

from nmt.explanation.align import Links
from ui.alignment.views_uploads import MAX_PASTE_CHARS, PairsError, parse_tsv_pairs, parse_two_files
from ui.common import widgets as W
from ui.figures.common import md

PREFERRED = ("multi30k/test_2016_flickr", "multi30k/val", "alignment/hansards-naacl2003-en-fr/test")
UPLOADS = ("paste", "TSV file", "two files")


@dataclass
class Pairs:
    """The sentence pairs being browsed, and their gold links if they are a gold alignment set."""

    name: str
    pairs: list[tuple[str, str]]
    pretokenized: bool = False
    sure: list[Links] | None = None
    possible: list[Links] | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def gold(self) -> bool:
        """Whether the pairs come with gold Sure/Possible links."""
        return self.sure is not None


def corpus_pairs(src: str, tgt: str) -> Pairs | None:
    """Pairs of a split of the data directory (with gold links for alignment sets)."""
    splits = W.corpus_splits(src, tgt)
    if not splits:
        st.warning(f"No {src}–{tgt} parallel files (NAME.{src} and NAME.{tgt}, gzipped or not) were found. "
                   + W.roots_note())
        return None
    split = W.split_picker(splits, "al_split", prefer=PREFERRED)
    try:
        s_lines, r_lines = W.read_split(split, src, tgt)
    except (OSError, ValueError) as err:
        st.error(f"Cannot read {md(split.label)}: {md(str(err))}")
        return None
    out = Pairs(split.label, [(s, r) for s, r in zip(s_lines, r_lines) if s.strip() and r.strip()],
                pretokenized=split.gold)
    if len(s_lines) >= W.MAX_READ:
        out.notes.append(f"Only the first {W.MAX_READ} lines of this split are read.")
    if split.gold:
        try:
            sure, possible = W.read_gold(split, src, tgt)
        except (OSError, ValueError) as err:
            st.error(f"Cannot read the gold links of {md(split.label)}: {md(str(err))}")
            return out
        if len(sure) != len(s_lines) or len(possible) != len(s_lines):
            st.error(f"The gold link files of {md(split.label)} have {len(sure)} / {len(possible)} lines "
                     f"but the text has {len(s_lines)}; ignoring them.")
            return out
        keep = [k for k, (s, r) in enumerate(zip(s_lines, r_lines)) if s.strip() and r.strip()]
        out.sure, out.possible = [sure[k] for k in keep], [possible[k] for k in keep]
    return out


def own_pairs() -> Pairs | None:
    """Pairs pasted or uploaded by the user (errors shown as messages)."""
    how = st.radio("How", UPLOADS, key="al_upload", bind=W.BIND, horizontal=True,
                   help="paste: source<TAB>reference lines · TSV file: the same as a file · two files: "
                        "sources and references, one sentence per line")
    try:
        if how == "paste":
            text = st.text_area("One pair per line: source, a tab, then the reference", key="al_paste", height=140,
                                placeholder="A dog runs.\tUn chien court.", max_chars=MAX_PASTE_CHARS)
            if not (text or "").strip():
                st.info("Paste sentence pairs to browse them.")
                return None
            return Pairs("pasted pairs", parse_tsv_pairs(text))
        if how == "TSV file":
            f = st.file_uploader("Tab-separated pairs (UTF-8)", type=["tsv", "txt"], key="al_file_tsv")
            if f is None:
                st.info("Upload a file with one source<TAB>reference pair per line.")
                return None
            return Pairs(f.name, parse_tsv_pairs(f.getvalue(), f.name))
        c1, c2 = st.columns(2)
        fs = c1.file_uploader("Source sentences (UTF-8, one per line)", key="al_file_src")
        fr = c2.file_uploader("Reference translations (UTF-8, one per line)", key="al_file_ref")
        if fs is None or fr is None:
            st.info("Upload both files: line k of the references translates line k of the sources.")
            return None
        return Pairs(f"{fs.name} + {fr.name}", parse_two_files(fs.getvalue(), fr.getvalue(), fs.name, fr.name))
    except PairsError as err:
        st.error(md(str(err)))  # messages name uploaded files: user text
        return None
