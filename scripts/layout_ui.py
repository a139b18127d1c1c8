"""ui/ by page, as nmt/ is by role (issue 49 items 2 and 6): moves every ui module with ``git mv`` (so history
follows) and rewrites every name of it in the tree.

    python -m scripts.layout_ui            # move and rewrite (a second run finds nothing left to move)
    python -m scripts.layout_ui --dry-run  # print the moves only

The layout it makes (docs/DEVELOPMENT.md, "Where a ui module goes"; guarded by tests/test_layout.py):

- ``ui/<page>/``: one package per page (``stepper``, ``lesson`` with the vote page and the class room,
  ``explanation``, ``beam``, ``alignment``, ``paired``, ``timeline`` = Watch it learn, ``bottleneck``,
  ``compare``, ``length``). A module that only one page's files reach (directly or through other ui
  modules) lives there. Its Streamlit glue is ``<name>.py``; its pure view builders (no Streamlit) are
  ``views.py`` (the page's main one) and ``views_<name>.py``.
- ``ui/common/``: what two or more pages reach and that is not a figure builder (Streamlit glue, the model
  catalogue, caches and jobs).
- ``ui/figures/``: pure figure, table and HTML builders that two or more pages reach (no Streamlit).

Rewritten in every tracked text file (code, tests, scripts, bench, docs, configs; this file and committed
result records excepted): ``from ui import a, b as c`` / ``from ui.views import …`` (split per new package;
a renamed module keeps its local name with ``as``), every dotted name ``ui.views.x`` / ``ui.x`` (imports,
monkeypatch targets, ``python -m`` strings, docstrings) and every path ``ui/views/x.py`` / ``ui/x.py``. A
flat module that moves one folder deeper gets ``parents[2]`` for its ``parent.parent``. Imports are sorted
afterwards by ``ruff check --fix --select I``. What the rewrite cannot decide (a bare ``ui/views/``, the
folder) is printed for a person to fix.
"""

from __future__ import annotations

import argparse
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = ("stepper", "lesson", "explanation", "beam", "alignment", "paired", "timeline", "bottleneck", "compare",
         "length")
PACKAGES = {  # the new packages and the docstring of their __init__.py
    "common": "Glue shared by two or more pages: the model catalogue, widgets, caches and jobs, the frame.",
    "figures": "Pure figure, table and HTML builders shared by two or more pages: data in, figures out, "
               "no Streamlit.",
    "stepper": "The stepper (pages/stepper.py): its controller, URL, panels and pure views.",
    "lesson": "The lesson and its vote page (pages/lesson.py, pages/vote.py): stops, class room, votes, server.",
    "explanation": "\"Is attention an explanation?\" (pages/explanation.py): its jobs, surgery panel and views.",
    "beam": "The beam search explorer (pages/beam_explorer.py) and its pure views.",
    "alignment": "The alignment browser (pages/alignment_browser.py): both directions, uploads.",
    "paired": "\"Is A really better than B?\" (pages/paired_compare.py): the whole-split run, α, words, views.",
    "timeline": "Watch it learn (pages/watch_it_learn.py) and its pure views.",
    "bottleneck": "Bottleneck side by side (pages/bottleneck_compare.py); its shared views are ui.figures.",
    "compare": "Compare attention (pages/compare_attention.py); its shared views are ui.figures.",
    "length": "Length vs quality (pages/length_quality.py); its shared views are ui.figures.",
}

# old dotted name -> new dotted name (decided from the import graph: which page files reach a module)
MOVES = {
    # stepper
    "ui.stepper_controller": "ui.stepper.controller",
    "ui.stepper_panels": "ui.stepper.panels",
    "ui.stepper_sampling": "ui.stepper.sampling",
    "ui.stepper_url": "ui.stepper.url",
    "ui.ensemble_panel": "ui.stepper.ensemble_panel",
    "ui.fusion_ui": "ui.stepper.fusion_panel",
    "ui.phases_panel": "ui.stepper.phases_panel",
    "ui.views.ensemble": "ui.stepper.views_ensemble",
    "ui.views.fusion": "ui.stepper.views_fusion",
    "ui.views.phases": "ui.stepper.views_phases",
    "ui.views.sampling": "ui.stepper.views_sampling",
    "ui.views.stepper_readout": "ui.stepper.views_readout",
    # lesson (and the vote page)
    "ui.lesson_check": "ui.lesson.check",
    "ui.lesson_check_panel": "ui.lesson.check_panel",
    "ui.lesson_content": "ui.lesson.content",
    "ui.lesson_page": "ui.lesson.page",
    "ui.lesson_room": "ui.lesson.room",
    "ui.lesson_teacher": "ui.lesson.teacher",
    "ui.serve": "ui.lesson.serve",
    "ui.vote_panel": "ui.lesson.vote_panel",
    "ui.votes": "ui.lesson.votes",
    "ui.views.lesson": "ui.lesson.views",
    "ui.views.concept_check": "ui.lesson.views_concept_check",
    "ui.views.lesson_handout": "ui.lesson.views_handout",
    "ui.views.lesson_similarity": "ui.lesson.views_similarity",
    # explanation
    "ui.explanation_jobs": "ui.explanation.jobs",
    "ui.surgery_panel": "ui.explanation.surgery_panel",
    "ui.views.explanation": "ui.explanation.views",
    "ui.views.surgery": "ui.explanation.views_surgery",
    # alignment
    "ui.alignment_both_ways": "ui.alignment.both_ways",
    "ui.views.uploads": "ui.alignment.views_uploads",
    # beam, timeline
    "ui.views.beam": "ui.beam.views",
    "ui.views.timeline": "ui.timeline.views",
    # paired
    "ui.paired_alpha": "ui.paired.alpha",
    "ui.paired_run": "ui.paired.run",
    "ui.paired_words": "ui.paired.words",
    "ui.views.paired": "ui.paired.views",
    "ui.views.alpha_diff": "ui.paired.views_alpha_diff",
    "ui.views.paired_words": "ui.paired.views_words",
    # common: reached by two or more pages, not a figure builder
    "ui.shell": "ui.common.shell",
    "ui.widgets": "ui.common.widgets",
    "ui.models": "ui.common.models",
    "ui.checkpoint_files": "ui.common.checkpoint_files",
    "ui.meta_cache": "ui.common.meta_cache",
    "ui.twins": "ui.common.twins",
    "ui.user_models": "ui.common.user_models",
    "ui.typed": "ui.common.typed",
    "ui.typed_language": "ui.common.typed_language",
    "ui.search_rules": "ui.common.search_rules",
    "ui.heavy": "ui.common.heavy",
    "ui.presets": "ui.common.presets",
    "ui.contrast_panel": "ui.common.contrast_panel",
    "ui.paper_panel": "ui.common.paper_panel",
    # figures: pure builders reached by two or more pages
    "ui.views.common": "ui.figures.common",
    "ui.views.heatmaps": "ui.figures.heatmaps",
    "ui.views.alignment": "ui.figures.alignment",
    "ui.views.bottleneck": "ui.figures.bottleneck",
    "ui.views.compare": "ui.figures.compare",
    "ui.views.contrastive": "ui.figures.contrastive",
    "ui.views.length": "ui.figures.length",
    "ui.views.paper": "ui.figures.paper",
    "ui.views.stepper": "ui.figures.stepper",
    "ui.views.stepper_charts": "ui.figures.stepper_charts",
    "ui.views.stepper_html": "ui.figures.stepper_html",
    "ui.views.stepper_state": "ui.figures.stepper_state",
    "ui.views.subword_view": "ui.figures.subword_view",
    "ui.views.unknown": "ui.figures.unknown",
}
OTHER_FILES = {"ui/icon.png": "ui/common/icon.png"}  # beside ui.common.shell, which reads it
GONE = ["ui/views/__init__.py"]
TEXT_SUFFIXES = {".py", ".md", ".toml", ".txt", ".sh", ".cfg", ".ini", ".yml", ".yaml"}
NOT_REWRITTEN = {"scripts/layout_ui.py"}  # this file names the old modules on purpose


def path_of(dotted: str) -> str:
    return dotted.replace(".", "/") + ".py"


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout


def move(dry_run: bool) -> list[str]:
    """``git mv`` every module (and the icon) not moved yet; new packages get their ``__init__``."""
    done = []
    for package, doc in PACKAGES.items():
        init = ROOT / "ui" / package / "__init__.py"
        if not init.exists() and not dry_run:
            init.parent.mkdir(parents=True, exist_ok=True)
            init.write_text(f'"""{doc}"""\n', encoding="utf-8")
            git("add", str(init.relative_to(ROOT)))
    pairs = [(path_of(o), path_of(n)) for o, n in MOVES.items()] + list(OTHER_FILES.items())
    for old, new in pairs:
        if (ROOT / old).exists() and not (ROOT / new).exists():
            done.append(f"{old} -> {new}")
            if not dry_run:
                git("mv", old, new)
    for old in GONE:
        if (ROOT / old).exists() and not dry_run:
            git("rm", "-q", old)
    return done


_FROM = re.compile(r"^(?P<indent>[ \t]*)from (?P<pkg>ui(?:\.views)?) import (?P<names>[^()\n#]+?)(?P<tail>[ \t]*#.*)?$",
                   re.MULTILINE)
_DOTTED = re.compile(r"(?<![\w./])(" + "|".join(re.escape(o) for o in sorted(MOVES, key=len, reverse=True))
                     + r")(?![\w])")
_PATHS = {path_of(o): path_of(n) for o, n in MOVES.items()} | OTHER_FILES
_PATH = re.compile(r"(?<![\w./])(" + "|".join(re.escape(o) for o in sorted(_PATHS, key=len, reverse=True))
                   + r")(?![\w])")


def _from_line(m: re.Match[str]) -> str:
    """``from ui import a, b as c`` into one line per new package; names not moved stay as they were."""
    lines: dict[str, list[str]] = {}
    for item in (s.strip() for s in m["names"].split(",")):
        if not item:
            continue
        name, _, alias = (p.strip() for p in item.partition(" as "))
        new = MOVES.get(f"{m['pkg']}.{name}")
        if new is None:
            lines.setdefault(m["pkg"], []).append(item)
            continue
        package, _, leaf = new.rpartition(".")
        local = alias or name
        lines.setdefault(package, []).append(leaf if leaf == local else f"{leaf} as {local}")
    tail = m["tail"] or ""
    out = [f"{m['indent']}from {p} import {', '.join(n)}" for p, n in lines.items()]
    out[0] += tail
    return "\n".join(out)


def rewrite(text: str) -> str:
    """Every name of a moved module in ``text`` under its new name."""
    text = _FROM.sub(_from_line, text)
    text = _DOTTED.sub(lambda m: MOVES[m[1]], text)
    return _PATH.sub(lambda m: _PATHS[m[1]], text)


def rewrite_tree() -> list[str]:
    """Rewrite every tracked text file; the files changed."""
    changed = []
    deeper = {path_of(n) for o, n in MOVES.items() if not o.startswith("ui.views.")}
    for rel in git("ls-files").splitlines():
        p = ROOT / rel
        if rel in NOT_REWRITTEN or p.suffix not in TEXT_SUFFIXES or not p.is_file():
            continue
        text = p.read_text(encoding="utf-8")
        new = rewrite(text)
        if rel in deeper:  # ui/x.py -> ui/pkg/x.py: the repository root is one folder further up
            new = new.replace("Path(__file__).resolve().parent.parent", "Path(__file__).resolve().parents[2]")
        if new != text:
            p.write_text(new, encoding="utf-8")
            changed.append(rel)
    return changed


def leftovers() -> list[str]:
    """Lines that still name the old folder or a flat module (for a person to fix)."""
    pattern = r"ui[./]views\b|from ui import\b"  # also inside a string of source (after a \\n)
    found = subprocess.run(["git", "grep", "-n", "-E", pattern, "--", ".", ":!scripts/layout_ui.py", ":!bench/*.json"],
                           cwd=ROOT, capture_output=True, text=True).stdout
    return found.splitlines()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dry-run", action="store_true", help="print the moves, change nothing")
    args = p.parse_args(argv)
    for line in move(args.dry_run):
        print("moved", line)
    if args.dry_run:
        return 0
    changed = rewrite_tree()
    py = [c for c in changed if c.endswith(".py")]
    if py:
        subprocess.run(["ruff", "check", "--fix", "--select", "I", "-q", *py], cwd=ROOT, check=False)
    print(f"rewrote {len(changed)} files")
    for line in leftovers():
        print("to fix by hand:", line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
