"""Phones vote, on the same server: the projector's panel in the Lesson and the phone's page (``/vote``).

One :class:`ui.votes.Room` per server (``st.cache_resource``), in memory only. The projector shows a
short join address and the number of votes (never who voted), then, after the re-vote, the histogram;
B then reveals the model's row as usual. A phone shows the current question's source words as buttons
and sends one vote per round; its page asks the room again every two seconds, so a phone that joined
late, or waits for the re-vote, gets the current question. No account, no third-party service.
"""

from __future__ import annotations

import secrets
import socket
from urllib.parse import urlsplit

import altair as alt
import streamlit as st

from ui.views.common import FONT_MAIN, label_expr, md, readable
from ui.votes import Room

PHONE_KEY = "v"  # the phone's random token in its page's URL, so a reload keeps its one vote per round
POLL_S = 2.0


@st.cache_resource(show_spinner=False)
def room() -> Room:
    """The server's one ballot box (shared by every session, forgotten when the server stops)."""
    return Room()


def lan_host() -> str | None:
    """This machine's address on the local network (the one a phone on the same Wi-Fi reaches), or
    None. A UDP socket's ``connect`` picks the outgoing interface without sending anything."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))
            host = s.getsockname()[0]
    except OSError:
        return None
    return None if host.startswith("127.") else host


def join_address(url: str | None, lan: str | None) -> str:
    """The short address phones open: the projector's own host, or, where that is this machine's
    loopback name (which a phone cannot reach), its local-network address with the same port."""
    parts = urlsplit(url or "http://localhost:8501")
    host, port = parts.hostname or "localhost", parts.port
    if host in ("localhost", "127.0.0.1", "::1") and lan:
        host = lan
    return f"{parts.scheme or 'http'}://{host}{f':{port}' if port else ''}/vote"


def histogram(words: list[str], first: list[int], second: list[int]) -> alt.Chart:
    """Votes per source word, the first round light and the re-vote dark, side by side."""
    data = [{"word": w, "j": j, "round": name, "votes": n}
            for name, counts in (("first vote", first), ("after discussion", second))
            for j, (w, n) in enumerate(zip(words, counts, strict=True))]
    return alt.Chart(alt.Data(values=data)).mark_bar().encode(
        x=alt.X("j:O", title=None, axis=alt.Axis(labelExpr=label_expr(words), labelAngle=-40, labelOverlap=False)),
        xOffset=alt.XOffset("round:N", sort=["first vote", "after discussion"]),
        y=alt.Y("votes:Q", title="votes", axis=alt.Axis(tickMinStep=1)),
        color=alt.Color("round:N", sort=["first vote", "after discussion"],
                        scale=alt.Scale(range=["#9ecae1", "#08519c"]), legend=alt.Legend(orient="top", title=None)),
        tooltip=["word:N", "round:N", "votes:Q"],
    ).properties(height=150, width="container")


def tally(words: list[str], first: list[int], second: list[int]) -> str:
    """The histogram in words (for the back row and for screen readers): each word that got a vote."""
    def line(counts: list[int]) -> str:
        return " · ".join(f"{w} {n}" for w, n in zip(words, counts, strict=True) if n) or "no votes"
    return f"First vote: {line(first)} ({sum(first)}). After discussion: {line(second)} ({sum(second)})."


@st.fragment(run_every=POLL_S)
def projector(stop: str, prompt: str, words: list[str]) -> None:
    """The projector's panel: join address and vote count, the re-vote, then the histogram."""
    r = room()
    q = r.open(stop, prompt, words)
    n = sum(r.counts(q.round))
    st.markdown(f"**Vote on your phone:** `{join_address(st.context.url, lan_host())}` · "
                f"{'first vote' if q.round == 1 else 'after discussion'}: **{n} vote{'s' if n != 1 else ''}**",
                help="Phones open the address on the same Wi-Fi; one vote per phone per round, kept in memory.")
    if q.round == 1:
        st.button("Discuss, then vote again", key="ls_revote", on_click=r.revote, icon=":material/forum:")
    elif not r.shown:
        st.button("Show the votes", key="ls_showvotes", on_click=r.show, icon=":material/bar_chart:")
    else:
        first, second = r.counts(1), r.counts(2)
        # an explicit height: in a column Streamlit squashed the plot to a line
        st.altair_chart(readable(histogram(words, first, second), FONT_MAIN), height=230)
        st.caption(md(tally(words, first, second)))


def phone_token() -> str:
    """This phone's random token (kept in its URL), made up on its first visit."""
    token = st.query_params.get(PHONE_KEY)
    if not token or len(token) > 32 or not token.isalnum():
        token = secrets.token_hex(8)
        st.query_params[PHONE_KEY] = token
    return token


@st.fragment(run_every=POLL_S)
def phone() -> None:
    """The phone's page: the current question's words as big buttons, one vote per round."""
    r, token = room(), phone_token()
    if not r.join(token):
        st.error("The class is full (200 phones).")
        return
    q = r.question()
    if q is None:
        st.info("Waiting for the teacher's question…")
        return
    st.markdown(f"### {md(q.prompt)}")
    st.caption("First vote" if q.round == 1 else "Vote again, after the discussion")
    mine = r.voted(token)
    if mine is not None:
        st.success(f"Your vote: **{md(q.choices[mine])}**. Watch the projector.")
        return
    for j, word in enumerate(q.choices):
        st.button(word, key=f"v_{q.serial}_{j}", on_click=r.vote, args=(token, j), width="stretch")
