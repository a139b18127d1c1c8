"""Lesson: the paper's story in eight stops, each a live view of the model, narrated at a chosen level.

Predict, then reveal: at the stops with an α row to predict, the row stays hidden until the class
picks the source word it expects and someone reveals it; the model's row then shows with the guess
framed (at the annotations stop, the row of cosines of the word asked about). A presentation clicker
works: → or PageDown for the next stop, ← or PageUp for the previous one, B (a clicker's blank-screen
key) to reveal. The URL holds the stop (``ls_stop``, 1-based; anything else opens stop 1) and the level
(``ls_level``). The sidebar offers a printable handout (HTML, print-styled).
Content: :mod:`ui.lesson.content`; what each stop draws: :mod:`ui.lesson.stops`; drawing: :mod:`ui.lesson.views`
(stop 3: :mod:`ui.lesson.views_similarity`); session state: :mod:`ui.lesson.state`.
"""

from __future__ import annotations

from ui.common import shell

shell.framed()  # a page Streamlit started on its own (a fresh server's first request) runs in the frame

import streamlit as st

from ui.common import widgets as W
from ui.common.models import ModelGroup
from ui.figures.common import md
from ui.lesson import check_panel as K
from ui.lesson import page as P
from ui.lesson import room as R
from ui.lesson import state, vote_panel
from ui.lesson import stops as V
from ui.lesson import views as L
from ui.lesson.content import LEVELS, STOPS, Stop
from ui.lesson.votes import Room


def nav_bar(k: int, stop: Stop, checking: bool = False) -> None:
    """Back, position, next and reveal; PageUp/PageDown are hidden twins of back and next (through the
    concept check's questions while it runs, ``checking``)."""
    with st.container(horizontal=True, vertical_alignment="center", key="ls_top"):
        st.title(stop.title, anchor=False)
        st.space("stretch")
        st.button("Back", key="ls_back", icon=":material/arrow_back:", shortcut="Left", on_click=R.move, args=(-1,),
                  disabled=k == 0 and not checking)
        st.button("Next", key="ls_next", icon=":material/arrow_forward:", shortcut="Right", on_click=R.move,
                  args=(1,), disabled=k == len(STOPS) - 1 and not checking, type="primary")
        shown = state.revealed(stop.key)
        st.button("Hide row" if shown else "Reveal", key="ls_reveal", shortcut="B", on_click=R.reveal,
                  icon=":material/visibility_off:" if shown else ":material/visibility:", args=(stop.key,),
                  disabled=not stop.asks)
        if (link := P.stepper_link(stop, shown)) is not None:
            st.link_button("Stepper", link, key="ls_stepper", icon=":material/open_in_new:",
                           help="Open this stop's sentence in the stepper, in presentation mode, in a new tab: "
                                "try a word of your own; close that tab to come back to the lesson here.")
        st.markdown(f"**{k + 1} / {len(STOPS)}**", help=P.KEYS_NOTE)
    with st.container(key="ls_clicker"):  # hidden by CSS below; their shortcuts still work
        st.button("PageUp", key="ls_pgup", shortcut="PageUp", on_click=R.move, args=(-1,))
        st.button("PageDown", key="ls_pgdn", shortcut="PageDown", on_click=R.move, args=(1,))
    # (the main area takes the focus when clicked, as a teacher does before using the clicker: without its
    # focus shadow, drawn by a ::before, no grey frame around the projected page then)
    st.html("<style>.st-key-ls_clicker{display:none} .block-container{padding-top:4.25rem} "
            ".st-key-ls_top h1{font-size:2rem;padding:0} "
            "[data-testid=\"stMain\"]:focus::before{box-shadow:none}</style>")
    st.html(P.PILL_CSS)
    st.html(P.RELEASE_PILLS, unsafe_allow_javascript=True)


def refused() -> None:
    """A visitor who is not the teacher (a phone): no lesson, no answers, the way to the vote instead."""
    st.title("Lesson", anchor=False)
    st.info("The Lesson runs on the teacher's machine. To vote, open the address the projector shows "
            "(or scan its code).")
    st.markdown("[Vote with the room code](vote)")


def sidebar(k: int, room: Room) -> None:
    """The handout, the colours, the phones' switch and the presenter view's link."""
    with st.sidebar:
        st.download_button("Handout (HTML, print it)", P.handout, file_name="lesson-handout.html",
                           mime="text/html", on_click="ignore", icon=":material/print:", key="ls_handout")
        st.radio("Colours of α", list(L.PALETTES), format_func=L.PALETTES.__getitem__, key=state.PALETTE,
                 index=list(L.PALETTES).index(R.colours()["palette"]), on_change=R.on_colours)
        st.toggle("α on a log scale", key=state.LOG, value=R.colours()["log"], on_change=R.on_colours,
                  help="Symmetric-log colours: weights of 0.01 to 0.1, invisible on a linear scale, show too.")
        st.toggle("Phones vote", key=state.VOTE_ON, value=R.voting(), on_change=R.set_voting,
                  help="The class votes from their phones (same Wi-Fi): the projector shows the address to open.")
        st.link_button("Presenter view (a second tab)", R.links(room, k, presenter=True),
                       icon=":material/co_present:")


def body(room: Room, stop: Stop, group: ModelGroup, level: str) -> None:
    """The stop itself: narration and question on the left, its view on the right, the phones' panel."""
    left, right = st.columns([1, 2] if stop.key == "bottleneck" else [2, 3], gap="medium")
    with left:
        if stop.sentence:
            st.markdown(f"*{md(stop.sentence)}*")
        if stop.asks and not state.revealed(stop.key):
            st.caption("Guess first: the explanation appears with the model's row (B).")  # it names the answer
        else:
            st.markdown(md(stop.narration[level]))
    V.VIEWS[stop.key](stop, group, left, right)
    with left, st.container(border=True):
        st.markdown(f"**Question for the class.** {md(stop.question)}")
    with left:
        K.start_button(room, stop.key)
    V.phones(room, stop, group, left, right)


def main() -> None:
    """Build the page."""
    room = R.start()
    if room is None:
        refused()
        return
    with st.sidebar:
        st.header("Lesson")
        level = st.radio("Narration", list(LEVELS), format_func=LEVELS.__getitem__, key=state.LEVEL,
                         index=list(LEVELS).index(R.level()), on_change=R.set_level)
    level = L.level_of(level)
    k = R.current_stop()
    stop = STOPS[k]
    group = P.model_pair(stop.group)
    if group is None or group.search is None or W.load_lm(group.search) is None:
        return
    checking = K.running(room, stop.key)
    nav_bar(k, stop, checking is not None)
    if R.presenting():
        V.presenter(stop, room)
    if checking is not None:
        K.panel(room, checking, R.voting(), R.presenting())
    else:
        body(room, stop, group, level)
    sidebar(k, room)
    vote_panel.follow(room, R.drawn(room))


main()
