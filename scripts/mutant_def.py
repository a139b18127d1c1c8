"""One mutant of :mod:`scripts.mutate`: an exact source edit and the tests that should fail on it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mutant:
    """One source edit and the tests that should fail on it."""

    name: str
    file: str
    old: str
    new: str
    tests: tuple[str, ...]
    what: str


def m(name: str, file: str, old: str, new: str, tests: tuple[str, ...] | str, what: str) -> Mutant:
    """A mutant; ``tests`` is one test path or node id, or several."""
    return Mutant(name, file, old, new, (tests,) if isinstance(tests, str) else tests, what)
