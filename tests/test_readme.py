"""README.md against the results files: its numbers are what scripts/readme_numbers.py writes.

The generator is checked three ways: the committed README must equal its output; the builders are
run on hand-made results whose Markdown is written out here by hand; and the Multi30k table of the
README is parsed back and compared cell by cell with the results JSON, read directly.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scripts import readme_blocks as B
from scripts import readme_numbers as R

ROOT = Path(__file__).resolve().parents[1]
TEXT = (ROOT / "README.md").read_text(encoding="utf-8")
RESULTS = (ROOT / "RESULTS.md").read_text(encoding="utf-8")  # the README's results, generated the same way
BOTH = {"README.md": TEXT, "RESULTS.md": RESULTS}
VENV = "python3 -m venv .venv && . .venv/bin/activate"
APP = "pip install -r requirements.txt && streamlit run app.py"
TESTS = "pip install -r requirements.txt -r requirements-dev.txt && python -m pytest -q -n 2 --dist loadfile"
# Measured-looking numbers: decimals, percentages, thousands separators.
MEASURED = re.compile(r"(?<![\w.])(\d+\.\d+|\d+ ?%|\d{1,3}(?:,\d{3})+)(?![\w.])")
# Numbers outside the blocks that are not measurements: the Python version, a licence, a corpus excerpt.
NOT_MEASURED = {"3.11", "2.0", "4.0", "3,000"}  # 2.0, 4.0: CC-BY licence versions


@pytest.mark.parametrize("name", list(BOTH))
def test_readme_is_what_the_generator_writes(name: str) -> None:
    text = BOTH[name]
    new = R.render(text, R.load_sources())
    diff = "".join(difflib.unified_diff(text.splitlines(True), new.splitlines(True), name, "generated"))
    assert new == text, f"{name} differs from the results files; run python -m scripts.readme_numbers\n" + diff


def test_every_block_lives_in_exactly_one_of_the_two_files() -> None:
    R.check_markers(TEXT + "\n" + RESULTS, complete=True)
    assert "<!-- begin: models -->" in TEXT and "<!-- begin: classroom -->" in TEXT
    assert "<!-- begin: europarl -->" in RESULTS and "<!-- begin: europarl -->" not in TEXT
    assert R.main(["--check"]) == 0


def test_setup_commands_appear_verbatim() -> None:
    lines = [line.strip() for line in TEXT.splitlines()]
    for command in (VENV, APP, TESTS):
        assert command in lines, command
    # the commands and what to try first come before the results
    assert TEXT.index(TESTS) < TEXT.index("## The pages") < TEXT.index("## Results")
    # .ci/run runs the same command, word for word (tests/test_ci.py checks how)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert f"TEST_COMMAND='{TESTS}'" in ci, ".ci/run must run the README's test command"


@pytest.mark.parametrize("name", list(BOTH))
def test_no_measured_number_outside_the_generated_blocks(name: str) -> None:
    found = [m.group(1) for m in MEASURED.finditer(R.outside_blocks(BOTH[name]))]
    assert [n for n in found if n not in NOT_MEASURED] == []


def test_the_measured_number_check_catches_prose() -> None:
    text = TEXT.replace("## The pages", "RNNsearch reaches 55.6 BLEU, 15 % more.\n\n## The pages")
    found = {m.group(1) for m in MEASURED.finditer(R.outside_blocks(text))} - NOT_MEASURED
    assert found == {"55.6", "15 %"}


def test_relative_links_lead_to_files() -> None:
    targets = re.findall(r"\]\(((?!https?:|#)[^)\s#]+)[^)\s]*\)", TEXT + RESULTS)
    assert targets, "the README links its screenshots"
    assert [t for t in targets if not (ROOT / t).exists()] == []


def _slugs(text: str) -> set[str]:
    """GitHub's anchors of a text's headings (lowercase, punctuation dropped, spaces to -)."""
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
            for h in re.findall(r"^#+ (.+)$", text, flags=re.MULTILINE)}


def test_anchor_links_lead_to_headings() -> None:
    """``(#name)`` links match a heading of their own file; ``(RESULTS.md#name)`` one of RESULTS.md."""
    anchors = re.findall(r"\]\(#([^)]+)\)", TEXT)
    assert anchors and [a for a in anchors if a not in _slugs(TEXT)] == []
    into = re.findall(r"\]\(RESULTS\.md#([^)]+)\)", TEXT)
    assert len(into) >= 7 and [a for a in into if a not in _slugs(RESULTS)] == []
    assert [a for a in re.findall(r"\]\(#([^)]+)\)", RESULTS) if a not in _slugs(RESULTS)] == []


def test_multi30k_table_equals_the_results_json_cell_by_cell() -> None:
    block = RESULTS.split("<!-- begin: multi30k -->")[1].split("<!-- end: multi30k -->")[0]
    res = json.loads((ROOT / "checkpoints" / "m30k-en-fr.results.json").read_text(encoding="utf-8"))
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in block.splitlines() if line.startswith("| RNN")]
    splits = ["val", "test_2016_flickr", "test_2017_flickr", "test_2017_mscoco"]
    assert len(rows) == 4
    for model, dec, *cells in rows:
        scores = res["models"][model.lower()]["scores"]
        for split, cell in zip(splits, cells, strict=True):
            r = scores[split]["beam5" if dec == "beam 5" else dec]
            shown = [float(x) for x in cell.split(" / ")]
            assert shown == pytest.approx([r["bleu"]["score"], r["bleu_lc"]["score"]], abs=0.05), (model, dec, split)
    tok = res["models"]["rnnsearch"]["scores"]["test_2016_flickr"]["beam5"]["bleu_tok_lc"]["score"]
    assert f"RNNsearch {tok:.2f}" in block


def hand_made_export(bleu: float, lc: float) -> dict[str, Any]:
    """One nmt.tools.export model entry with two splits (the second without beam 5)."""
    r = {"bleu": {"score": bleu}, "bleu_lc": {"score": lc}}
    return {"config": {"context": "attention"}, "scores": {"val": {"greedy": r, "beam5": r}, "test": {"greedy": r}}}


def test_score_table_on_hand_made_results() -> None:
    assert B.score_table({"a": hand_made_export(51.849, 52.06)}) == [
        "| model | decoding | val | test |",
        "|---|---|---:|---:|",
        "| RNNsearch | greedy | 51.8 / 52.1 | 51.8 / 52.1 |",
        "| RNNsearch | beam 5 | 51.8 / 52.1 |  |",
    ]


def test_length_buckets_keep_the_large_buckets_only() -> None:
    def buckets(scores: list[float]) -> list[dict[str, Any]]:
        """Three buckets, the last too small to show."""
        return [{"lo": lo, "hi": lo + 10, "n": n, "score": x} for lo, n, x in zip((0, 10, 20), (150, 2000, 99), scores,
                                                                                   strict=True)]
    europarl = {"models": {
        "RNNencdec-50": {"checkpoint": "e.pt", "tests": {B.EP_TEST: {"by_length": buckets([20.81, 17.85, 3.0])}}},
        "RNNsearch-50": {"checkpoint": "s.pt", "tests": {B.EP_TEST: {"by_length": buckets([24.24, 24.61, 9.0])}}},
        "RNNsearch-30": {"checkpoint": None, "tests": {}},
    }}
    assert B.length_buckets({"europarl": europarl}).splitlines()[:5] == [
        "| source words | 0–9 | 10–19 |",
        "|---|---:|---:|",
        "| sentences | 150 | 2,000 |",
        "| RNNsearch-50 | 24.2 | 24.6 |",
        "| RNNencdec-50 | 20.8 | 17.9 |",
    ]


def test_wrapped_prose_never_starts_a_line_like_a_list() -> None:
    text = "a" * 96 + " bb 2. then more words " + "x " * 30  # at WIDTH, "2. then" would open line 2
    lines = R.wrap(text).splitlines()
    assert len(lines) > 1 and all(len(x) <= R.WIDTH for x in lines)
    assert not any(R.MARKUP_START.match(x) for x in lines[1:])
    assert " ".join(lines).split() == text.split()
    assert R.wrap("| a | b |\n* item " + "y " * 60).splitlines()[2].startswith("  y")


def test_formatting_helpers() -> None:
    assert (B.num(-0.3024, 3), B.count(10006), B.pct(0.4946), B.device("cpu (1 threads)")) == \
        ("−0.302", "10,006", "49 %", "one CPU thread")
    assert B.label({"arch": "luong", "attention": "local-p", "window": 10, "score": "general",
                    "input_feeding": True}) == "Luong local-p (D = 10), general score, input feeding"
    assert B.label({"context": "fixed"}) == "RNNencdec"


@pytest.mark.parametrize(("edit", "message"), [
    (lambda t: t.replace("<!-- end: speed -->", ""), "needs its own"),
    (lambda t: t.replace("<!-- begin: speed -->\n", "").replace("<!-- end: speed -->", ""), "missing"),
    (lambda t: t + "\n<!-- begin: speed -->\n<!-- end: speed -->\n", "more than once"),
    (lambda t: t + "\n<!-- begin: tables -->\n<!-- end: tables -->\n", "unknown"),
])
def test_broken_markers_are_refused(edit: Callable[[str], str], message: str) -> None:
    with pytest.raises(R.ReadmeError, match=message):
        text = edit(TEXT + "\n" + RESULTS)
        R.check_markers(text, complete=True)
        R.render(text, R.load_sources())


def test_check_exits_1_on_an_edited_number_and_0_after_rewriting(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    block = TEXT.split("<!-- begin: models -->")[1]
    number = re.search(r"\d+\.\d", block).group(0)
    edited = TEXT.replace("<!-- begin: models -->" + block,
                          "<!-- begin: models -->" + block.replace(number, "99.9", 1))
    readme = tmp_path / "README.md"
    readme.write_text(edited, encoding="utf-8")
    assert R.main(["--check", "--readme", str(readme)]) == 1
    assert "99.9" in capsys.readouterr().out
    assert R.main(["--readme", str(readme)]) == 0
    assert readme.read_text(encoding="utf-8") == TEXT
    assert R.main(["--check", "--readme", str(readme)]) == 0


# That each shipped Multi30k model's results-file BLEU (three variants) is what nmt.tools.evaluate computes
# today: tests/test_corpus.py, one evaluation per model for both claims.


def test_classroom_block_on_hand_made_benchmarks() -> None:
    targets = {"first_view_s": 3.0, "step_s": 0.3, "freeze_s": 1.0, "unfreeze_s": 1.0, "play_s_per_word": 0.5}
    idle = {"first_view_s": 2.04, "step_s": 0.2504, "freeze_s": 0.5, "unfreeze_s": 0.4, "play_s_per_word": 0.512,
            "meets_target": {"step_s": True, "play_s_per_word": False}, "targets": targets, "repeats": 3,
            "cpu_count": 4}
    loaded = {**idle, "first_view_s": 99.0}
    klass = {"p95_ms": 123.4, "errors": 2, "p95_1s_passed_at_steps_per_s": 10.4, "rss_ok": True,
             "rss_after_mib": 500.2, "rss_baseline_mib": 480.0}
    load = {"runs": [{"class": klass}, {"rounds": []}]}
    text = B.classroom({"classroom": {"idle machine (a day)": idle, "loaded (a day)": loaded}, "load": load})
    assert text == (
        "Measured in Chromium on 4 CPU cores with nothing else running (`bench/classroom.py`, medians of 3): the "
        "stepper's first view 2.0 s (target 3 s), Step 250 ms from click to screen (target 300 ms), the freeze "
        "toggle 0.50 s, Play 0.51 s per word at the 0.5 s setting.\n\n"
        "With 30 students each pressing Step every 2 s on one server (`bench/load.py --class`), a step took 123 ms "
        "at the 95th percentile with 2 errors, and the server's memory returned to its baseline; the 95th "
        "percentile passes 1 s at about 10 steps per second (about 21 students stepping every 2 s).")
    grew = B.classroom({"classroom": {}, "load": {"runs": [{"class": {**klass, "rss_ok": False}}]}})
    assert "server's memory ended at 500 MiB (baseline 480); the 95th" in grew


def test_class_votes_sentence_on_a_hand_made_benchmark() -> None:
    v = {"machine": {"cores": 2}, "loadavg_1min_before": 8.19, "loadavg_1min_after": 3.0, "phones": 60, "students": 30,
         "votes_counted": 59, "errors": 1, "tap_to_projector": {"p50_ms": 3256.5, "p95_ms": 7168.3},
         "step": {"p95_ms": 512.0}, "rss_mib": {"before": 550.3, "peak": 572.4, "after": 551.6}}
    assert B.class_votes(v) == (
        "With 60 phones voting in a Lesson room while 30 students press Step every 2 s on one server "
        "(`bench/class_votes.py`, 2 CPU cores, shared with other work at a load average up to 8), a tap reached the "
        "projector in 3.3 s at the median and 7.2 s at the 95th percentile (the projector redraws every 2 s), a step "
        "took 0.5 s at the 95th percentile, 59 of 60 votes were counted with 1 errors, and the server's memory went "
        "from 550 to 572 MiB at its peak and back to 552 MiB.")
    idle = B.class_votes({**v, "loadavg_1min_before": 1.0, "loadavg_1min_after": 0.5})
    assert "(`bench/class_votes.py`, 2 CPU cores), a tap" in idle


def test_unknown_words_block_on_a_hand_made_benchmark() -> None:
    row = {"checkpoint": "x.pt", "data": "tatoeba-fr-en", "split": "test", "sentences": 1234, "decoding": "beam5",
           "kept": {"bleu": 17.4}, "copied": {"bleu": 22.184}, "dictionary": {"bleu": 23.1}}
    assert B.unknown({"unknown": [row]}).splitlines()[2] == \
        "| `x.pt` | tatoeba-fr-en/test (1,234) | beam 5 | 17.40 | 22.18 | 23.10 |"
