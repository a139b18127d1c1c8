"""RNNsearch Explorer: the frame every page runs in (``streamlit run app.py``).

Every page of the app is listed here once, in the menu's order: its file in ``pages/``, its title (the
menu's words and the browser tab's), its icon, its address and how its sidebar opens.
:func:`ui.common.shell.frame` hands the list to ``st.navigation``, draws the menu, configures the page and runs it
inside the error boundary. The stepper is the first page, at ``/``; every other page keeps the address of
its file's name (``/lesson``, ``/alignment_browser`` …), so shared links open the same view.
"""

from __future__ import annotations

import streamlit as st

from ui.common import shell


def stepper_sidebar() -> str:
    """The stepper's sidebar: collapsed in presentation mode (read from the URL before the session knows)."""
    from ui.stepper import url as stepper_url

    return "collapsed" if stepper_url.presenting() else "auto"


def watch_sidebar() -> str:
    """Watch it learn's sidebar: collapsed in its presentation mode."""
    return "collapsed" if st.query_params.get("wl_present") == "true" else "auto"


PAGES: tuple[shell.Page, ...] = (
    shell.Page("pages/stepper.py", "Step through decoding", ":material/footprint:", default=True,
               sidebar=stepper_sidebar),
    shell.Page("pages/lesson.py", "Lesson", ":material/school:", sidebar="collapsed"),
    shell.Page("pages/beam_explorer.py", "Beam search explorer", ":material/account_tree:"),
    shell.Page("pages/alignment_browser.py", "Alignment browser", ":material/grid_on:"),
    shell.Page("pages/watch_it_learn.py", "Watch it learn", ":material/movie:", sidebar=watch_sidebar),
    shell.Page("pages/bottleneck_compare.py", "Bottleneck side by side", ":material/compare_arrows:"),
    shell.Page("pages/compare_attention.py", "Compare attention", ":material/join_inner:"),
    shell.Page("pages/length_quality.py", "Length vs quality", ":material/show_chart:"),
    shell.Page("pages/paired_compare.py", "Is A really better than B?", ":material/balance:"),
    shell.Page("pages/explanation.py", "Is attention an explanation?", ":material/psychology_alt:"),
    # a phone's page, opened from the projector's address or QR code: not in the menu
    shell.Page("pages/vote.py", "Vote", ":material/how_to_vote:", menu=False, sidebar="collapsed"),
)

if __name__ == "__main__":  # run by Streamlit; tests import the list
    shell.frame(PAGES)
