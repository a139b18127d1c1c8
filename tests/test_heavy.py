"""ui/common/heavy.py (issue 24, item 2): caches bounded in bytes, one running copy of each job, few heavy jobs at once.

No timing: threads meet on events, so each test passes or fails the same way on a loaded machine.
"""

from __future__ import annotations

import pickle
import threading
from collections.abc import Callable
from typing import Any

import pytest

from ui.common import heavy
from ui.common.heavy import ENTRY_BYTES, MISSING, Busy, ByteLRU, SingleFlight, Slots, memo

# pickle (protocol 5) of 1,000 bytes, counted by hand: PROTO 2 + FRAME 9 + BINBYTES 1 + length 4
# + the 1,000 bytes + MEMOIZE 1 + STOP 1 = 1,018; 100,000 bytes leave the frame out: 2 + 5 + 100,000 + 1 + 1.
KB_PICKLE, BIG_PICKLE = 1018, 100_009
WAIT = 30  # seconds a test thread waits for an event before the test gives up (a hang, not a timing check)


def test_byte_lru_counts_pickled_bytes_and_evicts_the_least_recent_by_bytes() -> None:
    per = KB_PICKLE + ENTRY_BYTES  # 1,274 bytes per 1,000-byte value
    store = ByteLRU(max_bytes=3 * per)  # three fit, a fourth does not
    for k in "abc":
        store.put(k, k.encode() * 1000)
    assert store.nbytes == 3 * per and len(store) == 3
    assert store.get("a") == b"a" * 1000  # a is now the most recent: b goes first
    store.put("d", b"d" * 1000)
    assert store.get("b") is MISSING and [store.get(k)[:1] for k in "acd"] == [b"a", b"c", b"d"]
    assert store.nbytes == 3 * per
    store.put("e", b"e" * 100_000)  # larger than the whole budget: returned, not kept, nothing evicted
    assert "e" not in store and len(store) == 3 and store.nbytes == 3 * per
    # a 100,000-byte value (100,265 counted) in a budget of 102,900 leaves room for two of the small ones
    # (100,265 + 2 × 1,274 = 102,813): the oldest, "a", goes
    big = ByteLRU(max_bytes=102_900)
    for k in "abc":
        big.put(k, k.encode() * 1000)
    big.put("x", b"x" * 100_000)
    assert big.nbytes == BIG_PICKLE + ENTRY_BYTES + 2 * per and "a" not in big and "b" in big


def test_byte_lru_gives_each_reader_its_own_copy_and_replaces_in_place() -> None:
    store = ByteLRU(max_bytes=10_000)
    store.put("k", {"words": ["a", "b"]})
    store.get("k")["words"].append("c")  # a caller changing what it got
    assert store.get("k") == {"words": ["a", "b"]}
    store.put("k", b"k" * 1000)
    assert store.nbytes == KB_PICKLE + ENTRY_BYTES and len(store) == 1
    store.put("k", b"k" * 100_000)  # a too large new value drops the old one too
    assert store.get("k") is MISSING and store.nbytes == 0


def _in_thread(fn: Callable[[], Any], out: dict[str, Any], name: str) -> threading.Thread:
    def body() -> None:
        try:
            out[name] = fn()
        except BaseException as err:  # handed to the test
            out[name] = err

    t = threading.Thread(target=body, daemon=True)
    t.start()
    return t


def test_two_concurrent_requests_for_the_same_job_run_it_once() -> None:
    flight, calls = SingleFlight(), []
    follower_waits, out = threading.Event(), {}

    def job() -> str:
        calls.append(1)
        assert follower_waits.wait(WAIT)  # still running when the second request comes
        return "result"

    leader = _in_thread(lambda: flight.run("k", job), out, "leader")
    while not flight.running("k"):
        threading.Event().wait(0.01)
    follower = _in_thread(lambda: flight.run("k", job, on_wait=follower_waits.set), out, "follower")
    leader.join(WAIT), follower.join(WAIT)
    assert out == {"leader": "result", "follower": "result"} and len(calls) == 1
    assert flight.run("k", lambda: "again") == "again"  # finished jobs are not remembered: that is the cache's work


def test_a_failing_job_fails_for_its_waiters_and_a_stopped_one_is_run_again() -> None:
    flight, out = SingleFlight(), {}
    arrived, calls = threading.Event(), []

    def failing() -> str:
        calls.append("fail")
        assert arrived.wait(WAIT)
        raise ValueError("bad input")

    leader = _in_thread(lambda: flight.run("k", failing), out, "leader")
    while not flight.running("k"):
        threading.Event().wait(0.01)
    follower = _in_thread(lambda: flight.run("k", failing, on_wait=arrived.set), out, "follower")
    leader.join(WAIT), follower.join(WAIT)
    assert isinstance(out["leader"], ValueError) and out["follower"] is out["leader"] and calls == ["fail"]

    class Rerun(BaseException):  # as Streamlit's RerunException: the visitor changed a widget
        pass

    arrived.clear()

    def stopped() -> str:
        assert arrived.wait(WAIT)
        raise Rerun()

    leader = _in_thread(lambda: flight.run("s", stopped), out, "leader")
    while not flight.running("s"):
        threading.Event().wait(0.01)
    follower = _in_thread(lambda: flight.run("s", lambda: "mine", on_wait=arrived.set), out, "follower")
    leader.join(WAIT), follower.join(WAIT)
    assert isinstance(out["leader"], Rerun) and out["follower"] == "mine"


def test_memo_computes_a_key_once_for_concurrent_callers_and_keeps_it() -> None:
    store, flight, calls = ByteLRU(10_000), SingleFlight(), []
    follower_waits, out = threading.Event(), {}

    def compute() -> list[int]:
        calls.append(1)
        assert follower_waits.wait(WAIT)
        return [1, 2, 3]

    a = _in_thread(lambda: memo(store, flight, "k", compute), out, "a")
    while not flight.running("k"):
        threading.Event().wait(0.01)
    b = _in_thread(lambda: memo(store, flight, "k", compute, on_wait=follower_waits.set), out, "b")
    a.join(WAIT), b.join(WAIT)
    assert out == {"a": [1, 2, 3], "b": [1, 2, 3]} and len(calls) == 1
    assert memo(store, flight, "k", compute) == [1, 2, 3] and len(calls) == 1  # kept


def test_the_job_after_the_limit_is_queued_with_a_message_and_runs_when_a_slot_frees() -> None:
    slots, out = Slots(2), {}
    release = [threading.Event(), threading.Event()]
    started = [threading.Event() for _ in range(3)]
    queued: list[tuple[int, int]] = []
    told = threading.Event()

    def job(k: int, on_queue: Callable[[int, int], None] | None = None) -> Callable[[], str]:
        def run() -> str:
            with slots.hold(on_queue=on_queue, poll_s=0.05):
                started[k].set()
                if k < 2:
                    assert release[k].wait(WAIT)
            return f"done {k}"
        return run

    threads = [_in_thread(job(k), out, str(k)) for k in range(2)]
    assert started[0].wait(WAIT) and started[1].wait(WAIT) and slots.running == 2

    def on_queue(running: int, ahead: int) -> None:
        queued.append((running, ahead))
        told.set()

    third = _in_thread(job(2, on_queue), out, "2")
    assert told.wait(WAIT)
    assert not started[2].is_set() and queued[0] == (2, 0)  # told it waits, and it does
    release[0].set()
    assert started[2].wait(WAIT)
    release[1].set()
    for t in [*threads, third]:
        t.join(WAIT)
    assert out == {"0": "done 0", "1": "done 1", "2": "done 2"} and slots.running == 0


def test_a_job_that_may_not_wait_gets_a_busy_message_not_a_traceback() -> None:
    slots = Slots(1)
    with slots.hold():
        with pytest.raises(Busy) as err, slots.hold(max_wait_s=0):
            pytest.fail("ran without a free slot")
    assert str(err.value) == ("The server is busy: 1 long computation from other visitors is running (it runs at "
                              "most 1 at a time). Yours is queued and starts by itself as soon as a slot is free; "
                              "leaving the page cancels it.")
    assert slots.running == 0 and slots.ahead(0) == 0
    with slots.hold(max_wait_s=0):  # the slot given back: the next job runs at once
        assert slots.running == 1
    assert heavy.queued_message(3, 2, 3).startswith("The server is busy: 3 long computations from other visitors "
                                                    "are running (it runs at most 3 at a time); 2 more are waiting")


def test_the_heavy_job_limit_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for raw, n in (("", 1), ("3", 3), ("0", 1), ("many", 1)):
        monkeypatch.setenv(heavy.ENV_VAR, raw)
        assert heavy.heavy_limit() == n, raw
    with pytest.raises(ValueError):
        Slots(0)


def test_cached_is_keyed_by_arguments_and_bounded_by_its_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(heavy.BUDGETS, "test_cached", 2 * (KB_PICKLE + ENTRY_BYTES))
    heavy.store("test_cached").clear()
    calls: list[tuple[str, int]] = []

    @heavy.cached("test_cached")
    def blob(letter: str, n: int = 1000) -> bytes:
        calls.append((letter, n))
        return letter.encode() * n

    assert blob("a") == b"a" * 1000 and blob("a") == b"a" * 1000 and calls == [("a", 1000)]
    blob("b"), blob("c")  # the third 1,274-byte entry pushes out "a"
    assert blob("a") == b"a" * 1000 and calls == [("a", 1000), ("b", 1000), ("c", 1000), ("a", 1000)]
    assert heavy.store("test_cached").nbytes == 2 * (KB_PICKLE + ENTRY_BYTES)


# ----------------------------------------------------------------------------------------------
# The app's use of them (ui/common/widgets.py): decoding, per-sentence stores, heavy buttons
# ----------------------------------------------------------------------------------------------


def _wait_until(cond: Callable[[], bool]) -> None:
    """Until ``cond()`` holds (another thread reaching a state); fails after WAIT seconds."""
    done = threading.Event()
    for _ in range(WAIT * 100):
        if cond():
            return
        done.wait(0.01)
    pytest.fail("the other thread never got there")


def test_decoding_is_kept_in_bytes_not_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    """An 8,000-word trace was 15 MB in a cache of 2,048 entries: W.decode's store holds a byte budget."""
    from ui.common import widgets as W

    calls: list[tuple[str, ...]] = []

    def fake_decode(job: W.Job, sources: tuple[str, ...], refs: object = None) -> list[bytes]:
        calls.append(tuple(sources))
        return [s.encode() * 1000 for s in sources]  # a 1,000-byte "trace" per one-letter source

    per = len(pickle.dumps([b"a" * 1000], protocol=5)) + ENTRY_BYTES  # one chunk of one trace
    monkeypatch.setitem(heavy.BUDGETS, "decode", 2 * per)
    monkeypatch.setattr(heavy, "_stores", {})
    monkeypatch.setattr(W, "decode_now", fake_decode)
    job = W.Job("model.pt", 0.0, "greedy")
    for s in "abc":
        assert W.decode(job, [s]) == [s.encode() * 1000]
    assert heavy.store("decode").nbytes == 2 * per  # "a" made room for "c"
    W.decode(job, ["c"]), W.decode(job, ["a"])
    assert calls == [("a",), ("b",), ("c",), ("a",)]


def test_two_sessions_asking_for_the_same_sentences_compute_them_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two visitors opening the same corpus (or pressing the same button) share one run of each chunk."""
    from ui.common import widgets as W

    store, calls, release, out = ByteLRU(1 << 20), [], threading.Event(), {}
    flight = SingleFlight()
    monkeypatch.setattr(heavy, "FLIGHT", flight)
    keys = [("facts", k) for k in range(3)]

    def compute(part: list[int]) -> list[str]:
        calls.append(part)
        assert release.wait(WAIT)
        return [f"facts of {keys[p][1]}" for p in part]

    first = _in_thread(lambda: W.cached_items(store, keys, compute, "test", chunk=3), out, "first")
    chunk = ("items", id(store), tuple(keys))
    _wait_until(lambda: flight.running(chunk))
    second = _in_thread(lambda: W.cached_items(store, keys, compute, "test", chunk=3), out, "second")
    _wait_until(lambda: flight.waiters(chunk) == 1)
    release.set()
    first.join(WAIT), second.join(WAIT)
    assert out["first"] == out["second"] == ["facts of 0", "facts of 1", "facts of 2"] and calls == [[0, 1, 2]]


def test_a_heavy_button_job_queues_behind_the_servers_limit_with_a_message(monkeypatch: pytest.MonkeyPatch) -> None:
    from ui.common import widgets as W

    slots, said, ran, out = Slots(1), [], threading.Event(), {}
    monkeypatch.setattr(heavy, "SLOTS", slots)

    def job() -> str:
        ran.set()
        return "scores"

    with slots.hold():  # another visitor's Recompute
        waiting = _in_thread(lambda: W.in_slot(said.append, job), out, "mine")
        _wait_until(lambda: bool(said))
        assert not ran.is_set() and said[0] == heavy.queued_message(1, 0, 1) and "queued" in said[0]
        items = _in_thread(lambda: W.cached_items(ByteLRU(1 << 20), ["k"], lambda part: ["v"], "t", heavy_job=True),
                           out, "items")
        _wait_until(lambda: slots.queued == 2)  # the corpus job waits in line too
    waiting.join(WAIT), items.join(WAIT)
    assert out == {"mine": "scores", "items": ["v"]} and slots.running == 0
