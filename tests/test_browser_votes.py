"""The class votes from their phones, in Debian's Chromium against a real server: 9 phones (each its
own browser context, a 390×844 phone viewport) open the address the projector shows, vote, discuss and
vote again; the projector counts 9 votes each round, then draws the histogram, whose tally adds up to 9.
A second vote from a phone in the same round is not counted. Screenshots: test-artifacts/votes-*.png.

How a whole class loads the server (60 phones voting, 30 students stepping) is measured by
``bench/class_votes.py`` into ``bench/class-votes-cpu.json``, not here: nine phones prove the counting
(every phone distinct, a second vote refused, a re-vote counted) in a third of the time thirty took."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import parse_qs, urlparse

import pytest

from tests import readability as R
from tests.chromium import ARTIFACTS
from ui.lesson.vote_panel import join_address

WAIT = 180_000
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
PHONES = 9

# the panel's line ends with its count ("… · first vote: 9 votes"), which the fragment redraws every 2 s
COUNT_JS = """(want) => [...document.querySelectorAll('[data-testid="stMarkdownContainer"]')]
  .some(e => e.innerText.startsWith('Vote on your phone:') && e.innerText.trim().endsWith(': ' + want))"""

def test_join_address_names_a_host_a_phone_can_reach() -> None:
    # the base is the address `python -m nmt serve --class` found (or the projector's own), plus the room code
    assert join_address("http://192.168.1.20:8501", "K7QX") == "http://192.168.1.20:8501/vote?room=K7QX"
    assert join_address("https://class.example.org/", "AB23") == "https://class.example.org/vote?room=AB23"


@pytest.fixture(scope="module")
def projector(browser: object, shipped_app_url: str) -> Iterator[object]:
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    R.rendered(page, f"{shipped_app_url}/lesson?ls_stop=7&ls_vote=true")
    yield page
    page.close()


def counted(page: object, n: int) -> None:
    """Wait until the projector's panel shows ``n`` votes for the current round."""
    page.wait_for_function(COUNT_JS, arg=f"{n} vote{'s' if n != 1 else ''}", timeout=WAIT)


def vote_all(browser: object, ballots: list[tuple[str, str]], again: dict[int, str] | None = None) -> list[str]:
    """Each phone of ``ballots`` (its url, its word) opens its url and taps its word, all at once as a class
    does (every page opened before the first tap); phone ``k`` of ``again`` then reloads and finds
    ``again[k]`` gone and its first vote kept. The phones' URLs, in order."""
    contexts = [browser.new_context(**PHONE) for _ in ballots]
    try:
        pages = [ctx.new_page() for ctx in contexts]
        for page, (url, _) in zip(pages, ballots, strict=True):
            page.goto(url, wait_until="commit", timeout=WAIT)
        for page, (_, word) in zip(pages, ballots, strict=True):
            page.get_by_role("button", name=word, exact=True).click(timeout=WAIT)
        for page, (_, word) in zip(pages, ballots, strict=True):
            page.get_by_text(f"Your vote: {word}.").wait_for(timeout=WAIT)
        for k, other in (again or {}).items():
            pages[k].reload()
            pages[k].get_by_text(f"Your vote: {ballots[k][1]}.").wait_for(timeout=WAIT)  # still its first vote
            assert not pages[k].get_by_role("button", name=other, exact=True).count()
        return [page.url for page in pages]
    finally:
        for ctx in contexts:
            ctx.close()


@pytest.mark.browser
@pytest.mark.slow
def test_nine_phones_vote_twice_and_the_projector_counts_them(browser: object, shipped_app_url: str,
                                                                projector: object) -> None:
    address = projector.locator("code").filter(has_text="/vote").inner_text()
    assert "/vote?room=" in address, address
    phone_url = f"{shipped_app_url}/vote?{urlparse(address).query}"  # the room's address on this test's server
    urls = vote_all(browser, [(phone_url, "car" if k % 3 else "red") for k in range(PHONES)], again={0: "house"})
    tokens = {parse_qs(urlparse(u).query)["v"][0] for u in urls}
    assert len(tokens) == PHONES  # nine different phones
    counted(projector, PHONES)
    projector.screenshot(path=str(ARTIFACTS / "votes-first-round.png"))
    projector.get_by_role("button", name="Discuss, then vote again").click()
    counted(projector, 0)
    vote_all(browser, [(u, "red" if k == 0 else "car") for k, u in enumerate(urls)])  # the same phones, most
    # now convinced (their pages reopened)
    counted(projector, PHONES)
    projector.get_by_role("button", name="Show the votes").click()
    tally = projector.get_by_text(re.compile("^First vote:"))
    tally.wait_for(timeout=WAIT)
    text = tally.inner_text()
    projector.screenshot(path=str(ARTIFACTS / "votes-histogram.png"))
    assert text == "First vote: red 3 · car 6 (9). After discussion: red 1 · car 8 (9).", text
    assert projector.locator('[data-testid="stVegaLiteChart"]').count() >= 2  # the α chart and the histogram
