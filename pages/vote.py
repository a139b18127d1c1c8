"""Vote: the phone's page of the Lesson's class vote (``/vote?room=CODE``), opened from the address or the
QR code the projector shows. The current question's source words as big buttons, one vote per round;
nothing to sign in to, and nothing of the lesson (its answers and controls stay with the teacher).
The rooms and the ballot box: :mod:`ui.lesson.vote_panel` and :mod:`ui.lesson.votes`.
"""

from __future__ import annotations

from ui.common import shell

shell.framed()  # a page Streamlit started on its own (a fresh server's first request) runs in the frame

import streamlit as st

from ui.lesson import vote_panel


def main() -> None:
    """Build the page (laid out for a phone: one column, big buttons)."""
    st.title("Class vote", anchor=False)
    st.html(vote_panel.PHONE_CHROME)
    vote_panel.phone(vote_panel.phone_token())


main()
