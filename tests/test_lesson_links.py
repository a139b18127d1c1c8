"""Each stop of the Lesson opens in the stepper: the link is built from the stepper's own URL keys, and an
AppTest follows it from every stop to the stepper showing the same sentence, model and step in presentation
mode (the stepper is the app's first page, at the server's root, whatever file draws it)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urljoin, urlsplit

import pytest
from streamlit.testing.v1 import AppTest

from ui.lesson import views as L
from ui.lesson.content import STOPS
from ui.stepper.url import BOUND_KEYS

ROOT = Path(__file__).resolve().parent.parent
shipped = pytest.mark.skipif(not (ROOT / "checkpoints" / "m30k-en-fr-rnnsearch.pt").exists(),
                             reason="no shipped Multi30k pair")


def test_the_link_is_the_stepper_s_own_query_at_the_server_root() -> None:
    link = L.stepper_link("A red car.", "m30k-en-fr", 1)
    assert link == "./?text=A+red+car.&model=m30k-en-fr&step=1&present=true"  # written by hand
    assert urlsplit(urljoin("http://class.test:8501/lesson?ls_stop=7", link)).path == "/"
    assert L.stepper_link("x", "g", -3).endswith("step=0&present=true")


def lesson_link(query: dict[str, str], reveal: bool = False) -> str:
    """The Stepper button's address on the Lesson opened with ``query`` (after Reveal, with ``reveal``)."""
    at = AppTest.from_file(str(ROOT / "pages" / "lesson.py"), default_timeout=120)
    at.query_params.update(query)
    at.run()
    if reveal:
        at.button(key="ls_reveal").click().run()
    assert not at.exception and not at.error
    (button,) = [e for e in at.get("link_button") if e.proto.label == "Stepper"]
    return button.proto.url


def follow(link: str) -> AppTest:
    """The stepper opened from ``link`` as the browser would: the app's root page with the link's query."""
    assert urlsplit(urljoin("http://class.test:8501/lesson", link)).path == "/"
    query = {k: v[-1] for k, v in parse_qs(urlsplit(link).query).items()}
    assert set(query) <= {*BOUND_KEYS, "step"}, query  # only the stepper's own keys
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params.update(query)
    at.run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    return at


@shipped
@pytest.mark.parametrize("n", range(1, len(STOPS) + 1))
def test_every_stop_opens_its_sentence_in_the_stepper(n: int) -> None:
    stop = STOPS[n - 1]
    text, group = (stop.sentence, stop.group) if stop.sentence else stop.stepper  # type: ignore[misc]
    at = follow(lesson_link({"ls_stop": str(n)}))
    trace = at.session_state["sp__stepper"][1].trace
    assert (at.session_state["sp_text"], at.session_state["sp_model"], trace.source) == (text, group, text)
    assert at.session_state["sp_present"] is True
    if stop.predict is not None:  # the words before the row the class predicts: the next Step writes it
        assert at.session_state["sp_pos"] == len(trace.steps) == stop.predict
    else:  # the whole translation, its end included
        assert trace.steps and trace.steps[-1].token == "</s>" and at.session_state["sp_pos"] == len(trace.steps)


@shipped
def test_a_revealed_row_opens_with_its_word_written() -> None:
    at = follow(lesson_link({"ls_stop": "7"}, reveal=True))  # « Une voiture »: the row the class predicted
    trace = at.session_state["sp__stepper"][1].trace
    assert [s.token for s in trace.steps] == ["Une", "voiture"] and at.session_state["sp_pos"] == 2
