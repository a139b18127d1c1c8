"""The class's room on the server: the teacher's tabs (projector, presenter view) and the phones' page.

The server keeps its rooms in one :class:`ui.lesson.votes.RoomStore` (``st.cache_resource``, in memory only).
A tab of the Lesson opened on the teacher's machine (a local name, from this machine) starts a room and
carries its code and teacher key in its address (``ls_room``, ``ls_key``); a tab with both joins that
room as a teacher, from any machine. Anyone else gets no Lesson: a phone joins with the room code only
(``/vote?room=CODE``), so it never sees the presenter view, the answers or the controls.

A phone's identity is a random token its browser keeps in a cookie (:data:`COOKIE`, written by a
small script on its first visit) and in its address (``v``): a reload, a new tab or a retyped address
is the same phone, so it votes once per round. Everything is shown as plain text.
"""

from __future__ import annotations

import io
import ipaddress
import os
import secrets
from urllib.parse import urlsplit

import altair as alt
import segno
import streamlit as st

from ui.figures.common import FONT_MAIN, label_expr, md, readable
from ui.lesson import state
from ui.lesson.serve import CLASS_ENV, PHONES_ENV
from ui.lesson.votes import Ballot, Outcome, Room, RoomStore

ROOM_KEY, TEACHER_KEY = "ls_room", "ls_key"  # a teacher tab's address
PHONE_ROOM, PHONE_KEY = "room", "v"  # a phone's address: the room code, its token
COOKIE = "nmt_phone"
COOKIE_AGE_S = 12 * 3600
POLL_S = 2.0
FOLLOW_S = 1.0  # how often a teacher's tab checks whether the other one moved
LOCAL_NAMES = ("localhost", "127.0.0.1", "::1")
STATES = {"waiting": "Waiting for the teacher's question…",
          "closed": "This question is closed: the class has moved on.", "full": "This round is full.",
          "nocode": "Type the room code shown on the projector."}
# The join bar: fixed in the band above the lesson's title (Streamlit's header, empty between its » and ⋮), so
# the address, its QR code and the count are on the projector at every stop without scrolling and without
# pushing the stop down; the address on one line (never broken inside the host), 28 px unless too long for it.
# With the sidebar open it moves right of the sidebar (its « stays clickable), the address a little smaller to
# leave the ⋮ menu free; on a screen too narrow for it, it stays where it is drawn (under the stop), wrapping.
JOIN_BAR = "ls_joinbar"
JOIN_CSS = ("<style>@media (min-width: 1100px) {{ .st-key-ls_joinbar{{position:fixed;top:3px;left:50%;"
            "transform:translateX(-50%);z-index:999995;width:max-content!important;max-width:calc(100vw - 140px);"
            "background:#ffffff;padding:0 6px}} "
            "body:has([data-testid=\"stSidebar\"][data-collapsed=\"false\"]) .st-key-ls_joinbar{{left:312px;"
            "transform:none;max-width:none}} "
            "body:has([data-testid=\"stSidebar\"][data-collapsed=\"false\"]) .st-key-ls_join code{{"
            "font-size:min({px}px, calc((100vw - 660px) / {em}))!important}} "
            ".st-key-ls_join p{{margin:0;line-height:1.2;white-space:nowrap;font-size:20px}} "
            ".st-key-ls_join code{{white-space:nowrap;padding:0 .15em}} }} "
            ".st-key-ls_join code{{font-size:{px}px!important;overflow-wrap:anywhere}}</style>")
BAR_TEXT_PX, MONO_EM = 800, 0.6  # the address's room in the bar; a monospace letter's width in em
# The phone's page shows no sidebar, so no list of the app's pages: a student's phone is there to vote, and
# every page opened from a class of phones runs its models on the teacher's machine.
PHONE_CHROME = ('<style>[data-testid="stSidebar"], [data-testid="stExpandSidebarButton"], '
                '[data-testid="stSidebarCollapsedControl"]{display:none!important}</style>')
BIG_CSS = ("<style>.st-key-ls_phone_status p{font-size:20px!important;line-height:1.4} "
           ".st-key-ls_phone_choices button p{font-size:22px!important}</style>")


@st.cache_resource(show_spinner=False)
def rooms() -> RoomStore:
    """The server's rooms (shared by every session, forgotten when the server stops)."""
    return RoomStore()


# ----------------------------------------------------------------------------------------------
# The teacher's side
# ----------------------------------------------------------------------------------------------


def teacher_machine(ip: object, host: str | None) -> bool:
    """Whether a visitor is on the server's own machine: a loopback address reached by a local name
    (a test harness without either counts as local). A phone that reaches the server by its network
    name or address is not, even through a resolver that maps the name to loopback."""
    if isinstance(ip, str):
        try:
            if not ipaddress.ip_address(ip).is_loopback:
                return False
        except ValueError:
            return False
    name = urlsplit(f"//{host}").hostname if host else None
    return name is None or name in LOCAL_NAMES


def teacher_room(create: bool = True) -> Room | None:
    """This tab's room as a teacher: the one its address names with the right key, else (``create``,
    on the teacher's machine) a new one written into the address; None for anyone else."""
    store = rooms()
    room = store.teacher(st.query_params.get(ROOM_KEY), st.query_params.get(TEACHER_KEY))
    if room is None and create and teacher_machine(st.context.ip_address, st.context.headers.get("Host")):
        room = store.create()
        st.query_params[ROOM_KEY], st.query_params[TEACHER_KEY] = room.code, room.key
    return room


def phones_base() -> str:
    """The base address phones open: the one ``python -m nmt serve`` found (an address this server
    answers to), else the address this tab itself opened (which the server answered)."""
    base = os.environ.get(PHONES_ENV, "").rstrip("/")
    if base:
        return base
    parts = urlsplit(st.context.url or "http://localhost:8501")
    return f"{parts.scheme or 'http'}://{parts.netloc or 'localhost:8501'}"


def join_address(base: str, code: str) -> str:
    """The address a phone opens to join room ``code``."""
    return f"{base.rstrip('/')}/vote?{PHONE_ROOM}={code}"


def qr_png(url: str) -> bytes:
    """A QR code of ``url`` (PNG), dark on white with its quiet zone."""
    buf = io.BytesIO()
    segno.make(url, error="m").save(buf, kind="png", scale=5, border=2)
    return buf.getvalue()


@st.fragment(run_every=FOLLOW_S)
def follow(room: Room, seen: int) -> None:
    """Redraw the whole page when the room's position changed in another tab (within a second)."""
    if room.version != seen:
        st.rerun(scope="app")


def address_px(address: str) -> int:
    """The join address's type size: 28 px, read from the back row, or less for an address too long for one
    line of the join bar at that size (a long ``--host`` name), never under 16 px."""
    return max(16, min(28, int(BAR_TEXT_PX / (MONO_EM * max(1, len(address))))))


def votes_line(ballot: Ballot | None) -> str:
    """The join bar's count (Markdown): the open round's votes, what the closed question got, or that this
    stop asks nothing."""
    if ballot is None:
        return "no question at this stop"
    rounds = ("first vote", "after discussion")[:ballot.question.round]
    said = [votes(sum(ballot.counts(k))) for k in range(1, len(rounds) + 1)]  # each round held
    if ballot.closed:
        return "voting closed · " + ", ".join(f"{r}: {v}" for r, v in zip(rounds, said, strict=True))
    return f"{rounds[-1]}: **{said[-1]}**"


def votes(n: int) -> str:
    """``n`` votes, in words ("1 vote", "3 votes")."""
    return f"{n} vote{'s' if n != 1 else ''}"


@st.fragment(run_every=POLL_S)
def join_strip(room: Room) -> None:
    """On every stop while phones vote: the join bar (:data:`JOIN_CSS`: the address, its QR code, the count)."""
    address = join_address(phones_base(), room.code)
    st.html(JOIN_CSS.format(px=address_px(address), em=round(MONO_EM * max(1, len(address)), 1)))
    with st.container(key=JOIN_BAR, horizontal=True, vertical_alignment="center", gap="small"):
        st.image(qr_png(address), width=56)
        with st.container(key="ls_join"):
            st.markdown(f"**Vote on your phone:** `{address}`  \n{votes_line(room.current())}",
                        help="Phones on the same network open the address (or scan the code: click it to enlarge); "
                             "one vote per phone per round, kept in memory.")
    if not os.environ.get(CLASS_ENV) and urlsplit(address).hostname in LOCAL_NAMES:
        st.caption("The phones' address works on this machine only: for phones, start the server with "
                   "`python -m nmt serve --class`.")


@st.fragment(run_every=POLL_S)
def projector(room: Room, stop: str, prompt: str, words: list[str]) -> None:
    """At a stop with a question: the re-vote (V), showing the votes (S), then the histogram."""
    q = room.open(stop, prompt, words)
    b = room.ballot(stop)
    assert b is not None
    if not b.shown and not b.closed and q.round == 1:
        st.button("Discuss, then vote again (V)", key="ls_revote", on_click=room.revote, args=(stop,),
                  icon=":material/forum:", shortcut="V")
    elif not b.shown:
        st.button("Show the votes (S)", key="ls_showvotes", on_click=room.show, args=(stop,),
                  icon=":material/bar_chart:", shortcut="S")
    else:
        first, second = b.counts(1), b.counts(2)
        # an explicit height: in a column Streamlit squashed the plot to a line
        st.altair_chart(readable(histogram(words, first, second), FONT_MAIN), height=110)
        st.caption(md(tally(words, first, second)))


def histogram(words: list[str], first: list[int], second: list[int]) -> alt.Chart:
    """Votes per source word, the first round light and the re-vote dark, side by side."""
    data = [{"word": w, "j": j, "round": name, "votes": n}
            for name, counts in (("first vote", first), ("after discussion", second))
            for j, (w, n) in enumerate(zip(words, counts, strict=True))]
    return alt.Chart(alt.Data(values=data)).mark_bar().encode(
        x=alt.X("j:O", title=None, axis=alt.Axis(labelExpr=label_expr(words), labelAngle=0, labelOverlap=False)),
        xOffset=alt.XOffset("round:N", sort=["first vote", "after discussion"]),
        y=alt.Y("votes:Q", title="votes", axis=alt.Axis(tickMinStep=1, format="d", tickCount=3)),
        color=alt.Color("round:N", sort=["first vote", "after discussion"],
                        scale=alt.Scale(range=["#9ecae1", "#08519c"]), legend=alt.Legend(orient="right", title=None)),
        tooltip=["word:N", "round:N", "votes:Q"],
    ).properties(height=60, width="container")  # short: it fits under the stop's chart within 720 px


def tally(words: list[str], first: list[int], second: list[int]) -> str:
    """The histogram in words (for the back row and for screen readers): each word that got a vote."""
    def line(counts: list[int]) -> str:
        return " · ".join(f"{w} {n}" for w, n in zip(words, counts, strict=True) if n) or "no votes"
    return f"First vote: {line(first)} ({sum(first)}). After discussion: {line(second)} ({sum(second)})."


def class_guess(ballot: Ballot | None) -> tuple[int, str] | None:
    """The phones' answer for the verdict: the most voted word of the last round with votes (the first
    such word on a tie), and a line saying how many phones chose it; None before any vote."""
    if ballot is None:
        return None
    for round_, name in ((2, "after discussion"), (1, "first vote")):
        counts = ballot.counts(round_)
        if sum(counts):
            j = max(range(len(counts)), key=counts.__getitem__)
            word = ballot.question.choices[j]
            return j, f"The phones' vote ({name}): “{word}”, {counts[j]} of {sum(counts)}."
    return None


# ----------------------------------------------------------------------------------------------
# The phone's side
# ----------------------------------------------------------------------------------------------


def valid_token(token: object) -> bool:
    """Whether a token is one this page could have made (letters and digits, at most 32)."""
    return isinstance(token, str) and 0 < len(token) <= 32 and token.isascii() and token.isalnum()


def phone_token() -> str:
    """This browser's token: its cookie's, else its address's, else a new one; kept in both."""
    token = state.phone_token()
    if not valid_token(token):
        cookie = st.context.cookies.get(COOKIE)
        url = st.query_params.get(PHONE_KEY)
        token = cookie if valid_token(cookie) else url if valid_token(url) else secrets.token_hex(8)
        state.keep_phone_token(token)
    if st.query_params.get(PHONE_KEY) != token:
        st.query_params[PHONE_KEY] = token
    # letters and digits only (checked above), so nothing from the address reaches the script as code
    st.html(f"<script>document.cookie = '{COOKIE}={token}; path=/; max-age={COOKIE_AGE_S}; SameSite=Lax';</script>",
            unsafe_allow_javascript=True)
    return str(token)


def cast(room: Room, token: str, serial: int, choice: int) -> None:
    """A tap on a word: the vote, and what became of it for the page to say."""
    state.tell(room.vote(token, serial, choice))


def status(text: str) -> None:
    """What is happening, in words a phone shows at 20 px (plain text)."""
    with st.container(key="ls_phone_status"):
        st.markdown(md(text))


@st.fragment(run_every=POLL_S)
def phone(token: str) -> None:
    """The phone's page: the current question's words as big buttons, one vote per round."""
    st.html(BIG_CSS)
    room = rooms().get(st.query_params.get(PHONE_ROOM))
    if room is None:
        status(STATES["nocode"])
        st.text_input("Room code", key=state.CODE, max_chars=8, on_change=enter_code)
        return
    q = room.question()
    outcome: Outcome | None = state.told()
    if q is None:
        status(STATES["closed"] if outcome == "closed" else STATES["waiting"])
        return
    if outcome in ("closed", "full"):
        status(STATES[outcome])
    st.markdown(f"### {md(q.prompt)}")
    mine = room.voted(token)
    if mine is not None:
        status(f"Your vote: {q.choices[mine]}. Watch the projector.")
        return
    status("First vote: tap a word." if q.round == 1 else "Vote again, after the discussion: tap a word.")
    with st.container(key="ls_phone_choices"):
        for j, word in enumerate(q.choices):
            st.button(md(word), key=state.tap_key(q.serial, j), on_click=cast, args=(room, token, q.serial, j),
                      width="stretch")


def enter_code() -> None:
    """The typed room code into the address."""
    st.query_params[PHONE_ROOM] = state.code_typed().strip().upper()[:8]
