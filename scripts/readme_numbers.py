"""Write every measured number of README.md and RESULTS.md from the committed results files.

    python -m scripts.readme_numbers            # rewrite the marked blocks of README.md and RESULTS.md
    python -m scripts.readme_numbers --check    # exit status 1 if either differs from what it would write

README.md and RESULTS.md hold marked blocks, ``<!-- begin: NAME -->`` … ``<!-- end: NAME -->``, each block
in one of them. This script owns
their content and builds it only from ``checkpoints/*.results.json`` and ``bench/*.json``
(:mod:`scripts.readme_blocks`); the text outside the blocks is written by hand and carries no
measured number. ``tests/test_readme.py`` fails when either file differs from what this script writes.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scripts import readme_blocks as B
from scripts import readme_everyday as E
from scripts import readme_faith as F
from scripts import readme_paired as P

ROOT = Path(__file__).resolve().parents[1]
README = "README.md"
FILES = (README, "RESULTS.md")  # the generated blocks live in these two, each block in exactly one
# Each results file, by the short name the block builders use.
SOURCES = {
    "m30k": "checkpoints/m30k-en-fr.results.json",
    "luong": "checkpoints/m30k-en-fr-luong.results.json",
    "europarl": "checkpoints/europarl-en-fr.results.json",
    "everyday": "checkpoints/europarl-tatoeba-en-fr.results.json",
    "faith_m30k": "bench/faithfulness-m30k.json",
    "faith_europarl": "bench/faithfulness-europarl.json",
    "cpu": "bench/results-cpu.json",
    "classroom": "bench/classroom-cpu.json",
    "load": "bench/load-cpu.json",
    "class_votes": "bench/class-votes-cpu.json",
    "unknown": "bench/unk-dictionary.json",
    "candidates": "bench/candidates.json",
    "paired_europarl": "bench/paired-europarl-newstest2014.json",
    "paired_m30k": "bench/paired-m30k-test2016.json",
    "coverage": "bench/coverage-flags.json",
}
BLOCKS: dict[str, Callable[[dict[str, Any]], str]] = {
    "models": B.models,
    "multi30k": B.multi30k,
    "luong": B.luong,
    "europarl": B.europarl,
    "everyday": E.everyday,
    "length": B.length_buckets,
    "hansards": B.hansards,
    "faithfulness": F.faithfulness,
    "speed": B.speed,
    "classroom": B.classroom,
    "unknown": B.unknown,
    "candidates": B.candidates,
    "paired": P.paired,
    "coverage": P.coverage,
}
WIDTH = 100  # generated prose is wrapped like the hand-written text; tables are not
MARKUP_START = re.compile(r"(\d+[.)]|[-+*>#]|#+) ")
BLOCK_RE = re.compile(r"<!-- begin: ([\w-]+) -->\n(.*?)<!-- end: ([\w-]+) -->", re.DOTALL)


class ReadmeError(ValueError):
    """README.md's marked blocks cannot be filled in (unknown, unclosed, missing or repeated)."""


def load_sources(root: Path = ROOT) -> dict[str, Any]:
    """The committed results files, parsed, by short name."""
    return {name: json.loads((root / rel).read_text(encoding="utf-8")) for name, rel in SOURCES.items()}


def check_markers(text: str, complete: bool = False) -> None:
    """Refuse a text whose markers do not pair up, name an unknown block or repeat one; with ``complete``
    (the README and RESULTS.md together), one whose blocks are not every known block."""
    begins = re.findall(r"<!-- begin: ([\w-]+) -->", text)
    ends = re.findall(r"<!-- end: ([\w-]+) -->", text)
    unknown = sorted(set(begins + ends) - set(BLOCKS))
    if unknown:
        raise ReadmeError(f"unknown block(s) {unknown}; known: {sorted(BLOCKS)}")
    repeated = sorted({b for b in begins if begins.count(b) > 1})
    if repeated:
        raise ReadmeError(f"block(s) {repeated} appear more than once")
    missing = sorted(set(BLOCKS) - set(begins))
    if complete and missing:
        raise ReadmeError(f"block(s) {missing} are missing from the README")
    paired = [m.group(1) for m in BLOCK_RE.finditer(text) if m.group(1) == m.group(3)]
    if sorted(paired) != sorted(begins) or len(ends) != len(begins):
        raise ReadmeError("every <!-- begin: NAME --> needs its own <!-- end: NAME --> after it, unnested")


def wrap(markdown: str) -> str:
    """Generated Markdown with its paragraphs and list items wrapped at ``WIDTH`` (tables kept whole).

    No wrapped line may start like a Markdown list, quote or heading ("2. ", "- ", "> ", "# ")."""
    out = []
    for line in markdown.splitlines():
        if not line or line.startswith("|"):
            out.append(line)
            continue
        indent = "  " if line.startswith("* ") else ""
        for width in range(WIDTH, WIDTH // 2, -1):
            lines = textwrap.wrap(line, width, subsequent_indent=indent, break_long_words=False,
                                  break_on_hyphens=False)
            if not any(MARKUP_START.match(x.strip()) for x in lines[1:]):
                break
        out.extend(lines)
    return "\n".join(out)


def render(text: str, sources: dict[str, Any]) -> str:
    """``text`` with every marked block rewritten from ``sources``."""
    check_markers(text)

    def fill(m: re.Match[str]) -> str:
        """One block, markers kept, content rebuilt."""
        name = m.group(1)
        return f"<!-- begin: {name} -->\n{wrap(BLOCKS[name](sources).strip())}\n<!-- end: {name} -->"

    return BLOCK_RE.sub(fill, text)


def outside_blocks(text: str) -> str:
    """The hand-written part of the README: everything but the generated blocks' content."""
    return BLOCK_RE.sub(lambda m: f"<!-- block: {m.group(1)} -->", text)


def texts(root: Path = ROOT) -> dict[str, str]:
    """README.md and RESULTS.md as committed, by file name."""
    return {name: (root / name).read_text(encoding="utf-8") for name in FILES}


def main(argv: list[str] | None = None) -> int:
    """Rewrite the blocks of README.md and RESULTS.md (or of one ``--readme`` file), or with ``--check``
    report how they differ and exit 1."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--check", action="store_true", help="change nothing; exit 1 if a file is out of date")
    p.add_argument("--readme", help="fill in this one file only (default: README.md and RESULTS.md)")
    p.add_argument("--root", default=str(ROOT), help="the project folder holding checkpoints/ and bench/")
    args = p.parse_args(argv)
    root = Path(args.root)
    paths = [Path(args.readme)] if args.readme else [root / name for name in FILES]
    if not args.readme:
        try:
            check_markers("\n".join(path.read_text(encoding="utf-8") for path in paths), complete=True)
        except ReadmeError as err:
            print(f"error: README.md and RESULTS.md: {err}", file=sys.stderr)
            return 2
    return max(fill_file(path, load_sources(root), args.check) for path in paths)


def fill_file(path: Path, sources: dict[str, Any], check: bool) -> int:
    """Rewrite one file's blocks (0), or with ``check`` print its diff (1 if it differs); 2 on bad markers."""
    text = path.read_text(encoding="utf-8")
    try:
        new = render(text, sources)
    except ReadmeError as err:
        print(f"error: {path.name}: {err}", file=sys.stderr)
        return 2
    if new == text:
        return 0
    if check:
        sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), new.splitlines(True),
                                                   f"{path.name} (committed)", f"{path.name} (from the results)"))
        print(f"{path.name} differs from the results files: run python -m scripts.readme_numbers", file=sys.stderr)
        return 1
    path.write_text(new, encoding="utf-8")
    print(f"rewrote the numbers of {path.name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
