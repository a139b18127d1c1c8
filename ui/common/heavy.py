"""What one server spends on its visitors: caches bounded in bytes, one run of each job, few heavy jobs at once.

Issue 24 (items 1–2) measured a server that kept an 8,000-word trace (15 MB) in a cache bounded only
by its 2,048 entries, and ran the same 152-s corpus recomputation once per visitor who pressed its
button, all at the same time. Three pieces, no Streamlit here (unit-tested with threads):

- :class:`ByteLRU`: a thread-safe least-recently-used map bounded by the bytes it holds. Values are
  kept pickled, so the bound is exact (a value's size is its pickle's length plus :data:`ENTRY_BYTES`)
  and every reader gets its own copy, as with ``st.cache_data``. A value larger than the whole
  budget is returned to its caller and not kept.
- :class:`SingleFlight`: the first caller of a key runs the job; callers that come while it runs
  wait for its result (or its error) instead of running it again.
- :class:`Slots`: at most ``n`` heavy jobs (the buttons that translate a corpus or explain a whole
  sentence) run at once in the server; the next ones queue, told how many run and wait ahead of them.

:func:`memo` ties the first two together: ``memo(store, flight, key, compute)`` is the value of
``key``, computed once per server while the store keeps it, and once at a time.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import pickle
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

ENTRY_BYTES = 256  # counted per entry besides its pickle: the key and the map's own bookkeeping
MISSING: Any = object()  # what :meth:`ByteLRU.get` returns for a key it does not hold
# Source words a page may translate (greedy and forced) on opening a URL or moving a slider; more is a
# button's job. Measured on one torch thread: the Europarl RNNsearch-50 spends about 10 ms of CPU a source
# word (0.76 s greedy for a 101-token sentence, plus the forced pass), the Multi30k one about a third of
# that: 800 words stay under the 10 s an interaction may take (issue 24). Multi30k's 50 first test pairs
# are ~650 words; Europarl's are ~1,300.
AUTO_WORDS = 800
ENV_VAR = "RNNSEARCH_HEAVY_JOBS"  # how many heavy jobs may run at once in one server (default 1)


class ByteLRU:
    """A map shared by every session, bounded by the bytes its pickled values take.

    ``put`` pickles the value; once the stored bytes pass ``max_bytes`` the least recently used
    entries go first. ``get`` unpickles a fresh copy (callers may change what they get)."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = int(max_bytes)
        self._data: OrderedDict[Hashable, bytes] = OrderedDict()
        self._lock = threading.Lock()
        self.nbytes = 0  # the stored pickles plus ENTRY_BYTES per entry

    @staticmethod
    def cost(blob: bytes) -> int:
        """What one stored pickle counts against the budget."""
        return len(blob) + ENTRY_BYTES

    def get(self, key: Hashable, default: Any = MISSING) -> Any:
        """A copy of the value of ``key`` (now the most recently used), or ``default``."""
        with self._lock:
            blob = self._data.get(key)
            if blob is None:
                return default
            self._data.move_to_end(key)
        return pickle.loads(blob)

    def put(self, key: Hashable, value: Any) -> bool:
        """Keep ``value`` under ``key``, evicting the least recently used entries beyond the budget.
        False (nothing kept, nothing evicted) when the value alone is larger than the budget."""
        blob = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        if self.cost(blob) > self.max_bytes:
            self.discard(key)  # a stale smaller value must not outlive the new one
            return False
        with self._lock:
            old = self._data.pop(key, None)
            if old is not None:
                self.nbytes -= self.cost(old)
            self._data[key] = blob
            self.nbytes += self.cost(blob)
            while self.nbytes > self.max_bytes:
                _, gone = self._data.popitem(last=False)
                self.nbytes -= self.cost(gone)
        return True

    def discard(self, key: Hashable) -> None:
        """Forget ``key`` if held."""
        with self._lock:
            old = self._data.pop(key, None)
            if old is not None:
                self.nbytes -= self.cost(old)

    def clear(self) -> None:
        """Forget everything."""
        with self._lock:
            self._data.clear()
            self.nbytes = 0

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._data

    def __len__(self) -> int:
        return len(self._data)


@dataclass
class _Call:
    """One running job of a :class:`SingleFlight`: its callers wait on ``done``."""

    done: threading.Event
    value: Any = None
    error: Exception | None = None
    abandoned: bool = False  # the leader was stopped (a rerun or a closed tab), not failed: run it again
    waiting: int = 0


class SingleFlight:
    """At most one running copy of a job per key; later callers wait for the running one's result.

    An ordinary error of the job reaches every caller. A leader stopped by something that is not an
    ``Exception`` (Streamlit's rerun and stop signals are ``BaseException``) raises in its own session
    only; a waiting caller then runs the job itself."""

    def __init__(self) -> None:
        self._calls: dict[Hashable, _Call] = {}
        self._lock = threading.Lock()

    def running(self, key: Hashable) -> bool:
        """Whether a job for ``key`` runs now."""
        with self._lock:
            return key in self._calls

    def waiters(self, key: Hashable) -> int:
        """How many callers wait for the running job of ``key`` (0 when none runs)."""
        with self._lock:
            call = self._calls.get(key)
            return 0 if call is None else call.waiting

    def run(self, key: Hashable, job: Callable[[], Any], on_wait: Callable[[], None] | None = None) -> Any:
        """``job()``, or the result of the copy already running for ``key`` (``on_wait()`` is called
        once before waiting for it)."""
        while True:
            with self._lock:
                call = self._calls.get(key)
                leader = call is None
                if call is None:
                    call = self._calls[key] = _Call(threading.Event())
                else:
                    call.waiting += 1
            if leader:
                return self._lead(key, call, job)
            if on_wait is not None:
                on_wait()
            call.done.wait()
            if call.abandoned:
                continue
            if call.error is not None:
                raise call.error
            return call.value

    def _lead(self, key: Hashable, call: _Call, job: Callable[[], Any]) -> Any:
        try:
            call.value = job()
            return call.value
        except Exception as err:
            call.error = err
            raise
        except BaseException:
            call.abandoned = True
            raise
        finally:
            with self._lock:
                del self._calls[key]
            call.done.set()


def memo(store: ByteLRU, flight: SingleFlight, key: Hashable, compute: Callable[[], Any],
         on_wait: Callable[[], None] | None = None) -> Any:
    """The value of ``key``: from ``store``, else computed once (concurrent callers share the run) and kept."""
    value = store.get(key)
    if value is not MISSING:
        return value

    def job() -> Any:
        value = store.get(key)  # finished by another caller between our look and our run
        if value is MISSING:
            value = compute()
            store.put(key, value)
        return value

    return flight.run(key, job, on_wait)


class Busy(RuntimeError):
    """A heavy job waited longer than its limit for a free slot."""


class Slots:
    """A server-wide limit of ``n`` heavy jobs running at once; the others queue in arrival order
    (a ticket each; the earliest waiting ticket gets the next free slot)."""

    def __init__(self, n: int) -> None:
        if n < 1:
            raise ValueError("at least one heavy job must be able to run")
        self.n = n
        self.running = 0
        self._queue: list[int] = []  # tickets waiting, oldest first
        self._next = 0
        self._cond = threading.Condition()

    @property
    def queued(self) -> int:
        """How many jobs wait for a slot now."""
        with self._cond:
            return len(self._queue)

    def ahead(self, ticket: int) -> int:
        """How many queued jobs wait before ``ticket``."""
        with self._cond:
            return self._queue.index(ticket) if ticket in self._queue else 0

    @contextlib.contextmanager
    def hold(self, on_queue: Callable[[int, int], None] | None = None, poll_s: float = 0.5,
             max_wait_s: float | None = None) -> Iterator[None]:
        """Run the body in a slot. While all ``n`` are taken, ``on_queue(running, ahead)`` is called
        at once and then every ``poll_s`` seconds (in Streamlit, each call is where a visitor's
        rerun or closed tab can stop the wait); :class:`Busy` after ``max_wait_s`` (None: no limit)."""
        with self._cond:
            ticket, self._next = self._next, self._next + 1
            self._queue.append(ticket)
        waited = 0.0
        try:
            while True:
                with self._cond:
                    if self.running < self.n and self._queue[0] == ticket:
                        self._queue.pop(0)
                        self.running += 1
                        break
                    running, ahead = self.running, self._queue.index(ticket)
                if max_wait_s is not None and waited >= max_wait_s:
                    raise Busy(queued_message(running, ahead, self.n))
                if on_queue is not None:
                    on_queue(running, ahead)
                with self._cond:
                    self._cond.wait(poll_s)
                waited += poll_s
        except BaseException:
            with self._cond:
                if ticket in self._queue:
                    self._queue.remove(ticket)
                    self._cond.notify_all()
            raise
        try:
            yield
        finally:
            with self._cond:
                self.running -= 1
                self._cond.notify_all()


def queued_message(running: int, ahead: int, n: int) -> str:
    """What a visitor whose heavy job waits for a slot reads (plain words, no traceback)."""
    jobs = f"{running} long computation{'s' * (running != 1)}"
    queue = f"; {ahead} more {'are' if ahead != 1 else 'is'} waiting before yours" if ahead else ""
    return (f"The server is busy: {jobs} from other visitors {'are' if running != 1 else 'is'} running (it runs "
            f"at most {n} at a time){queue}. Yours is queued and starts by itself as soon as a slot is free; "
            "leaving the page cancels it.")


def heavy_limit() -> int:
    """How many heavy jobs one server runs at once: ``$RNNSEARCH_HEAVY_JOBS``, default 1 (of 2 cores, one
    stays free for the visitors who step through sentences)."""
    raw = os.environ.get(ENV_VAR, "").strip()
    try:
        return max(1, int(raw)) if raw else 1
    except ValueError:
        return 1


# ----------------------------------------------------------------------------------------------
# The server's own instances (one per process, shared by every session)
# ----------------------------------------------------------------------------------------------

MIB = 1 << 20
BUDGETS = {  # bytes each named store may hold; a name not listed gets DEFAULT_BUDGET
    "decode": 32 * MIB,  # decoding traces (every page's W.decode): an 8,000-word trace was 15 MB
    "alignment": 16 * MIB,  # per-sentence facts of the alignment browser's table and AER
    "explanation": 16 * MIB,  # per-step attributions
    "explanation_jobs": 16 * MIB,  # surgeries, copy-edit decodings and the debate tests
    "recomputed_scores": 4 * MIB,  # Length vs quality's Recompute results
    "paired-kept": 16 * MIB,  # the paired page's translations per chunk (~100 bytes a sentence: 20,000 × 2 is 4 MB)
    "splits": 48 * MIB,  # corpus files read (up to 20,000 pairs each)
    "stepper": 16 * MIB,  # the stepper's beam searches and whole-translation summaries
}
DEFAULT_BUDGET = 8 * MIB
_stores: dict[str, ByteLRU] = {}
_stores_lock = threading.Lock()
FLIGHT = SingleFlight()
SLOTS = Slots(heavy_limit())


def store(name: str) -> ByteLRU:
    """The process-wide store called ``name``, bounded by its entry in :data:`BUDGETS`."""
    with _stores_lock:
        if name not in _stores:
            _stores[name] = ByteLRU(BUDGETS.get(name, DEFAULT_BUDGET))
        return _stores[name]


def clear_all() -> None:
    """Forget every stored result (benchmarks' cold runs); jobs running now are not stopped."""
    with _stores_lock:
        for s in _stores.values():
            s.clear()


F = TypeVar("F", bound=Callable[..., Any])


def cached(name: str) -> Callable[[F], F]:
    """A drop-in for ``st.cache_data`` on a function of hashable arguments: results kept in the byte-bounded
    store ``name``, computed once at a time (single flight), a fresh copy to each caller. As with
    ``st.cache_data``, parameters whose names start with ``_`` are left out of the key."""

    def wrap(fn: F) -> F:
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(*args, **kwargs).arguments  # as st.cache_data: "_name" stays out of the key
            hashed = tuple((k, v) for k, v in bound.items() if not k.startswith("_"))
            key = (fn.__module__, fn.__qualname__, hashed)
            return memo(store(name), FLIGHT, key, lambda: fn(*args, **kwargs))

        return wrapper  # type: ignore[return-value]

    return wrap
