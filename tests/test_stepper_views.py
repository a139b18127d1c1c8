"""Table, HTML and export builders of the stepper (``ui.figures.stepper``, ``ui.figures.stepper_html``) on
hand-made traces (no model, no browser). Its charts are tested in tests/test_plots.py."""

from __future__ import annotations

import dataclasses
import json
import math
import re

import pytest

from nmt.decoding.trace import DecodeTrace, Replacement
from tests.step_traces import SRC, make_trace
from ui.figures.common import md
from ui.figures.stepper import (
    context_note,
    no_checkpoints_markdown,
    no_energies_note,
    output_words,
    source_columns,
    source_table,
    status_markdown,
    step_stats,
    topk_rows,
    trace_csv,
    trace_json,
    word_marks,
)
from ui.figures.stepper_charts import ramp_colour
from ui.figures.stepper_html import (
    compare_html,
    now_writing_html,
    page_css,
    prob_bar_html,
    source_html,
    translation_html,
    written_candidate_html,
)
from ui.figures.stepper_table import source_table_html


def test_source_table_and_stats() -> None:
    t = make_trace()
    step = t.steps[2]
    table = source_table(t, step)
    assert list(table.columns) == ["j", "source word", "read as", "e_ij", "α_ij", "most"]
    assert table["α_ij"].sum() == pytest.approx(1.0)
    assert table.loc[table["most"] == "★", "j"].tolist() == [2]
    assert table["read as"].tolist()[3] == "<unk>"
    stats = step_stats(t, step)
    assert stats["sum"] == pytest.approx(1.0)
    assert stats["entropy"] == pytest.approx(step.entropy())
    assert stats["word"] == "car" and stats["max_entropy"] == pytest.approx(math.log(len(SRC)))
    fixed = make_trace("fixed")
    assert source_table(fixed, fixed.steps[0]) is None
    assert step_stats(fixed, fixed.steps[0])["sum"] is None
    mean = make_trace("mean")
    mt = source_table(mean, mean.steps[0])
    assert mt["e_ij"].isna().all() and mt["α_ij"].sum() == pytest.approx(1.0)


def test_source_columns_are_the_tables_by_hand() -> None:
    """The α / e table's columns as the page sends them (Arrow, no pandas), at step i = 1 of the hand-made
    trace: e_1j = 3·[j = 1] − 0.1·j, α = their softmax, the 4th word read as <unk>."""
    cols = source_columns(make_trace(), make_trace().steps[1])
    e = [-0.0, 2.9, -0.2, -0.3, -0.4]
    z = sum(math.exp(x) for x in e)
    assert cols["j"] == [0, 1, 2, 3, 4] and cols["source word"] == SRC
    assert cols["read as"] == ["", "", "", "<unk>", ""] and cols["most"] == ["", "★", "", "", ""]
    assert cols["e_ij"] == pytest.approx(e) and cols["α_ij"] == pytest.approx([math.exp(x) / z for x in e])
    mean = make_trace("mean")
    assert source_columns(mean, mean.steps[0])["e_ij"] == [None] * 5
    assert source_columns(make_trace("fixed"), make_trace("fixed").steps[0]) is None


def test_the_step_table_shows_each_column_to_three_decimals() -> None:
    """The α / e table's HTML, cell by cell, from columns written by hand: j, the word (escaped), how it was read,
    e to three decimals (— for none), α as a bar of its width and its value, the ★; local attention's columns
    when they are there, with the column help as hover text."""
    cols = {"j": [0, 1], "source word": ["<b>", "dog"], "read as": ["<unk>", ""], "e_ij": [1.23456, None],
            "α_ij": [0.25, 0.75], "most": ["", "★"], "in window": ["yes", "—"], "Gaussian": [0.5, 0.0]}
    html = source_table_html(cols)
    heads = re.findall(r"<th(?: [^>]*)?>(.*?)</th>", html)
    assert heads == ["j", "source word x_j", "read as", "energy e_ij", "weight α_ij", "max", "in window", "Gaussian"]
    rows = [re.findall(r"<td(?: [^>]*)?>(.*?)</td>", r) for r in re.findall(r"<tr>(.*?)</tr>", html)[1:]]
    text = [[re.sub(r"<[^>]+>", "", c) for c in r] for r in rows]
    assert text == [["0", "&lt;b&gt;", "&lt;unk&gt;", "1.235", "0.250", "", "yes", "0.500"],
                    ["1", "dog", "", "—", "0.750", "★", "—", "0.000"]]
    assert 'width:25.0%' in rows[0][4] and 'width:75.0%' in rows[1][4]  # the bar is α wide
    assert 'title="Words outside the vocabulary are read as &lt;unk&gt;"' in html
    assert "font-size:1.2rem" in source_table_html(cols, big=True) and "<tbody></tbody>" in source_table_html({})


def test_html_snippets_escape_everything() -> None:
    t = make_trace()
    out = translation_html(t, shown=1)
    assert "<script>" not in out and "&lt;script&gt;" in out
    assert out.count("<span") == 3 and "forced" in out
    assert "rgba(255,189,69" in out.split("<span")[2]  # the shown step is highlighted
    src = source_html(t, t.steps[0])
    assert "<b>" not in src and "&lt;b&gt;" in src and "&quot;" in src
    assert "unk" in src
    fixed = source_html(make_trace("fixed"), make_trace("fixed").steps[0])
    # one summary c: every chip has the summary band's one flat colour, none a shade of the α ramp
    assert fixed.count("background:") == fixed.count("background:rgba(230,85,13,.3)") == len(make_trace().src_tokens)
    assert "press" in translation_html(make_trace(n_steps=0), None)
    assert "&lt;b&gt;" in written_candidate_html("<b>") and "<b>" not in written_candidate_html("<b>")


def test_source_words_are_shaded_from_the_heatmap_ramp() -> None:
    t = make_trace()
    step = t.steps[2]
    src = source_html(t, step)
    chips = src.split("<span")[1:]
    for j, chip in enumerate(chips):
        assert f"background:{ramp_colour(step.alpha[j])};" in chip
        assert f"{step.alpha[j]:.2f}" in chip  # α under the word
    assert f"background:{ramp_colour(step.alpha[2], paper=True)};" in source_html(t, step, paper=True)
    assert "α_ij at i = 2" in src
    assert "font-size:1.6rem" in source_html(t, step, big=True) and "font-size:1.6rem" not in src


def test_now_writing_says_which_word_was_written() -> None:
    t = make_trace()
    step = dataclasses.replace(t.steps[2], i=10)
    now = now_writing_html(step, 11)  # 11 words written: the latest is i = 10, the 11th word
    assert "Written at i = 10 (word 11)" in now and "Next: Step writes word 12 (i = 11)." in now
    assert "Now writing" not in now and "&lt;script&gt;" in now
    back = now_writing_html(t.steps[1], 3)
    assert "Looking back at i = 1 (word 2 of 3)" in back and "Next" not in back and "forced by you" in back
    end = now_writing_html(t.steps[2], 3, ended="Finished: the model wrote </s>.")
    assert "Finished: the model wrote &lt;/s&gt;." in end and "Next" not in end
    copied = now_writing_html(t.steps[2], 3, swap=Replacement(1, "gondola", "gondola", "copied"))
    assert "copied" in copied and "gondola" in copied
    looked_up = now_writing_html(t.steps[2], 3, swap=Replacement(1, "gondola", "gondole", "dictionary"))
    assert "gondole" in looked_up and "dictionary" in looked_up and "copied" not in looked_up
    assert "first word (i = 0)" in now_writing_html(None, 0)


def _unk_trace() -> DecodeTrace:
    """"un <unk> </s>" over "a gondola </s>": the <unk> step weighs </s> most, then 'gondola'."""
    rec = make_trace().steps[0]
    steps = [dataclasses.replace(rec, i=0, token="un", alpha=[0.8, 0.1, 0.1]),
             dataclasses.replace(rec, i=1, token="<unk>", alpha=[0.1, 0.35, 0.55]),
             dataclasses.replace(rec, i=2, token="</s>", alpha=[0.1, 0.2, 0.7])]
    return DecodeTrace("a gondola", ["a", "gondola", "</s>"], [False, True, False], "step", "attention", steps)


def test_unknown_words_are_copied_from_the_largest_alpha_never_eos() -> None:
    t = _unk_trace()
    copies = t.unk_copies()
    assert copies == {1: (1, "gondola")}  # </s> has the largest α (0.55) but is never copied
    assert output_words(t) == ["un", "<unk>"] and output_words(t, t.unk_replacements()) == ["un", "gondola"]
    html = translation_html(t, 2, t.unk_replacements())
    shown_text = html.split("<span")[2].split('">', 1)[1]  # the chip's text, after its title attribute
    assert shown_text.startswith("gondola") and "copied" in shown_text and "&lt;unk&gt;" not in shown_text
    assert "copied" not in translation_html(t, 2)
    swaps = dataclasses.replace(t, dictionary={"gondola": "gondole"}).unk_replacements()
    assert swaps == {1: Replacement(1, "gondola", "gondole", "dictionary")}
    assert output_words(t, swaps) == ["un", "gondole"]
    chip = translation_html(t, 2, swaps).split("<span")[2]
    assert "the dictionary translates the source word &#x27;gondola&#x27;" in chip
    assert chip.split('">', 1)[1].startswith("gondole") and "dictionary</sup>" in chip and "copied" not in chip
    fixed = dataclasses.replace(t, steps=[dataclasses.replace(s, alpha=None) for s in t.steps])
    assert fixed.unk_copies() == {}  # no α, nothing to copy from
    assert dataclasses.replace(fixed, context="fixed").unk_copies() == {}
    mean = dataclasses.replace(t, context="mean", steps=[dataclasses.replace(s, alpha=[0.5, 0.5, 0.0], energies=None)
                                                         for s in t.steps])
    assert mean.unk_copies() == {}  # uniform α points at no word (it would pick the first)


def test_topk_rows_mark_the_written_word() -> None:
    rows = topk_rows(make_trace().steps[1])
    assert [(r["rank"], r["word"], r["written"]) for r in rows] == [(0, "voiture", True), (1, "rouge", False),
                                                                    (2, "<b>", False)]
    assert rows[0]["p"] == pytest.approx(0.6)
    forced = topk_rows(dataclasses.replace(make_trace().steps[1], token="rouge"))  # a forced second choice
    assert [r["written"] for r in forced] == [False, True, False]
    assert "width:60.0%" in prob_bar_html(0.6) and "60.0%" in prob_bar_html(0.6)
    assert "width:100.0%" in prob_bar_html(1.7)


def test_word_marks_and_compare_html() -> None:
    assert word_marks(["une", "robe", "noire"], ["une", "veste", "noire"]) == ([False, True, False],
                                                                              [False, True, False])
    assert word_marks([], ["x"]) == ([], [True])
    assert word_marks(["où", "est", "la", "gare"], ["Où", "est", "l'", "<unk>"]) == ([False, False, True, True],
                                                                                   [False, False, True, True])
    out = compare_html("RNNsearch", ["un", "chat", "<b>"], "RNNencdec", ["un", "chien", "<b>"])
    assert "<b>" not in out and out.count("&lt;b&gt;") == 2 and "only in this translation" in out
    chips = out.split("<span")[1:]
    assert ["border:2px" in c for c in chips] == [False, True, False, False, True, False]


def test_status_line_counts_words_and_lists_unknown_source_words() -> None:
    t = make_trace()  # 3 steps; SRC[3] is outside the vocabulary
    line = status_markdown(t, done=False, limit=16, model="RNNsearch: fresh c_i", checkpoint="m-rnnsearch.pt")
    assert line.startswith("**3** target words written, at most 16 \\(the length limit\\: 2 × source tokens "
                           "\\+ 10\\) · RNNsearch\\: fresh c\\_i · ")
    assert line.endswith('1 source word outside the model\'s vocabulary, read as \\<unk\\>: \\"\\<b\\>x\\<\\/b\\>\\"]')
    one = dataclasses.replace(t, steps=t.steps[:1], src_unk=[False] * 5, finished=True)
    assert status_markdown(one, True, 16, "m", "c").startswith("**1** target word written, finished \\(\\<\\/s\\>\\)")
    assert ":red[" not in status_markdown(one, True, 16, "m", "c")
    beam = dataclasses.replace(t, method="beam")
    assert "of the beam\\'s best hypothesis \\(12 words\\)\\; forcing works in greedy mode" in status_markdown(
        beam, False, 12, "m", "c")


def test_notes_without_alignment() -> None:
    fixed = make_trace("fixed").steps[0]
    assert "‖c_i‖ = 4.000 at every step" in context_note("fixed", fixed, ablation=False)
    assert context_note("fixed", fixed, ablation=True).startswith("**Untrained ablation.**")
    assert context_note("mean", make_trace("mean").steps[0], False).startswith("**Mean context:**")
    assert context_note("attention", make_trace().steps[0], False) is None
    assert no_energies_note(make_trace(n_steps=0)).endswith("nothing decoded yet.")
    assert "fixed summary" in no_energies_note(make_trace("fixed"))
    assert "uniform weights" in no_energies_note(make_trace("mean"))
    assert "`RNNSEARCH_CHECKPOINTS`" in no_checkpoints_markdown("RNNSEARCH_CHECKPOINTS")


def test_page_css() -> None:
    assert page_css(False).startswith("<style>") and "stMainBlockContainer" in page_css(False)
    assert "font-size:1.2rem" in page_css(True) and "font-size:1.2rem" not in page_css(False)


def test_markdown_escape() -> None:
    raw = "**b** <i>x</i> $y$ :red[z] [l](u) `c` _e_ # h"
    escaped = md(raw)
    assert all(f"\\{c}" in escaped for c in "*<>$:[]()`_#")
    assert md("é 日本 ok") == "é 日本 ok"


def test_exports_csv_and_json() -> None:
    t = make_trace()
    csv = trace_csv(t).splitlines()
    assert csv[0].split(",")[:4] == ["context_mode", "i", "j", "target"]
    assert len(csv) == 1 + 3 * len(SRC)
    back = DecodeTrace.from_dict(json.loads(trace_json(t)))
    assert back.steps[1].forced and back.steps[2].alpha == t.steps[2].alpha
    fixed_csv = trace_csv(make_trace("fixed"))
    assert "fixed" in fixed_csv
    assert trace_csv(make_trace(n_steps=0)).splitlines()[0].startswith("context_mode")


def test_chip_lines_wrap_like_the_page() -> None:
    """Fig. 3(a)'s 14 tokens fit one line of chips at 1280×720 in both sizes; the 38 of the paper's long
    sentence take three (seen in Chromium); hand-counted: 910 px hold 10 chips of 5 characters
    (5 × 8.6 + 14 = 57 px each: 15 of them make 855 px, 16 make 912 px)."""
    from ui.common.presets import BY_NAME
    from ui.figures.stepper_html import chip_lines

    fig3 = [*BY_NAME["Reordered phrase"].text.replace(".", " .").split(), "</s>"]
    long = [*BY_NAME["Fixed-vector bottleneck"].text.replace(".", " .").replace(",", " ,").split(), "</s>"]
    assert (chip_lines(fig3), chip_lines(fig3, True)) == (1, 1)
    assert (chip_lines(long), chip_lines(long, True)) == (3, 3)
    assert chip_lines(["abcde"] * 15) == 1 and chip_lines(["abcde"] * 16) == 2


def test_candidate_list_line_and_rows_by_hand() -> None:
    from nmt.decoding.trace import DecodeTrace, StepRecord
    from nmt.models.candidates import CandidateList
    from ui.figures.stepper import candidate_rows, candidates_markdown

    def rec(i: int, tok: str) -> StepRecord:
        return StepRecord(i, tok, i, -0.1, False, None, None, [], 1.0, 1.0)

    t = DecodeTrace("a black cat", ["a", "black", "cat", "</s>"], [False] * 4, "step", "attention",
                    steps=[rec(0, "un"), rec(1, "chat"), rec(2, "noir")])
    assert candidates_markdown(t) is None and candidate_rows(t) == []
    t.candidates = CandidateList(0, 10, 9, 1234, {"chat": ["cat"], "noir": ["black"], "sombre": ["black"]})
    assert "**9** of the model's 1,234" in candidates_markdown(t) and "no words for their frequency" in \
        candidates_markdown(t)
    assert candidates_markdown(t, short=True) == ("**Candidate list:** 9 of 1,234 words (no words for their "
                                                  "frequency alone, 3 more from the dictionary)")
    assert candidate_rows(t) == [{"source word": "black", "brings in": "noir, sombre", "written so far": "noir"},
                                 {"source word": "cat", "brings in": "chat", "written so far": "chat"}]
    assert [t.came_in_via(i) for i in range(4)] == [[], ["cat"], ["black"], []]
