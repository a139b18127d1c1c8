"""Vote: the phone's page of the Lesson's class vote (``/vote``), opened from the address the projector
shows. The current question's source words as big buttons, one vote per round; nothing to sign in to.
The ballot box and the projector's side: :mod:`ui.vote_panel`.
"""

from __future__ import annotations

from ui import shell

with shell.page("Vote", sidebar="collapsed"):  # navigation first; a failing import shows the boundary
    import streamlit as st

    from ui import vote_panel


def main() -> None:
    """Build the page (laid out for a phone: one column, big buttons)."""
    st.title("Class vote", anchor=False)
    vote_panel.phone()


with shell.error_boundary("Vote"):
    main()
