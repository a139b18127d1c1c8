"""Unit tests of the analysis pages' builders (ui/figures, the pages' views): no browser, no Streamlit session."""

from __future__ import annotations

import math
import pickle
from pathlib import Path

import altair as alt
import pytest

from nmt.decoding.search import LENGTH_NORMS, forced, greedy
from nmt.text.tokenize import Tokenizer
from tests.traces import make_trace
from ui.alignment.views_uploads import MAX_PAIRS, PairsError, parse_tsv_pairs, parse_two_files
from ui.figures.alignment import (
    BROWSER_COLUMNS,
    browser_frame,
    filter_pairs,
    forced_facts,
    links_aer,
    links_corpus_aer,
    links_table,
    own_facts,
    scoring_text,
    selected_row,
    table_row,
)
from ui.figures.bottleneck import comparison_row, logp_chart, pick_by_length, sweep_chart, sweep_frame, sweep_sample
from ui.figures.common import NORM_LABELS, NORM_SHORT, chart_svg, model_caption, readable
from ui.figures.heatmaps import alpha_stats, links_frame, trace_alpha_chart, trace_chart

SHIPPED = Path(__file__).resolve().parent.parent / "checkpoints" / "m30k-en-fr-rnnsearch.pt"

# Uploaded pairs
# ----------------------------------------------------------------------------------------------


def test_tsv_pairs_parse_with_bom_crlf_and_blank_lines() -> None:
    data = "\ufeffA dog.\tUn chien.\r\n\r\nTwo cats.\t Deux chats. \r\n".encode()
    assert parse_tsv_pairs(data, "p.tsv") == [("A dog.", "Un chien."), ("Two cats.", "Deux chats.")]


@pytest.mark.parametrize(("text", "match"), [
    ("A dog.\tUn chien.\nNo tab here\n", r"Line 2 .* has no tab"),
    ("A\tB\tC\n", r"Line 1 .* has 2 tabs"),
    ("A dog.\t \n", r"Line 1 .* empty reference side"),
    ("\tUn chien.\n", r"Line 1 .* empty source side"),
    ("\n \n", r"empty"),
])
def test_tsv_pairs_fail_clearly(text: str, match: str) -> None:
    with pytest.raises(PairsError, match=match):
        parse_tsv_pairs(text)


def test_latin1_upload_names_file_line_and_encoding() -> None:
    data = "A dog.\tUn chien.\nA cafe.\tUn café.\n".encode("latin-1")
    with pytest.raises(PairsError) as err:
        parse_tsv_pairs(data, "pairs.tsv")
    msg = str(err.value)
    assert "pairs.tsv is not UTF-8" in msg and "line 2" in msg and "0xe9" in msg and "Latin-1" in msg


def test_binary_and_oversized_uploads_are_refused() -> None:
    with pytest.raises(PairsError, match="binary"):
        parse_tsv_pairs(b"\x00\x01\x02", "x.bin")
    with pytest.raises(PairsError, match="too many"):
        parse_tsv_pairs("a\tb\n" * (MAX_PAIRS + 1))


def test_an_uploaded_sentence_longer_than_a_box_is_refused_by_line() -> None:
    """A 50,000-character reference line would be force-decoded word by word (issue 24): 2,000 per side."""
    ok = "x" * 2000
    assert parse_tsv_pairs(f"A dog.\tUn chien.\n{ok}\t{ok}\n") == [("A dog.", "Un chien."), (ok, ok)]
    with pytest.raises(PairsError) as err:
        parse_tsv_pairs(f"A dog.\tUn chien.\n\nA cat.\t{'chat ' * 10_000}\n", "pairs.tsv")
    # 5 · 10,000 characters less the final space strip() takes
    assert str(err.value) == ("Line 3 of pairs.tsv: the reference has 49,999 characters; the limit is 2,000 per "
                              "sentence.")
    with pytest.raises(PairsError) as err:
        parse_two_files(f"{ok}x\n", "Un chat.\n", "en.txt", "fr.txt")
    assert str(err.value) == "Line 1 of en.txt: the source has 2,001 characters; the limit is 2,000 per sentence."


def test_two_files_pair_up_and_skip_lines_blank_in_both() -> None:
    src = b"A dog.\n\nTwo cats.\n\n"
    ref = b"Un chien.\n\nDeux chats.\n"
    assert parse_two_files(src, ref) == [("A dog.", "Un chien."), ("Two cats.", "Deux chats.")]


def test_two_files_with_different_line_counts_say_both_counts() -> None:
    with pytest.raises(PairsError, match=r"src\.en has 3 lines but ref\.fr has 2"):
        parse_two_files(b"a\nb\nc\n", b"x\ny\n", "src.en", "ref.fr")


def test_two_files_with_a_one_sided_empty_line_name_it() -> None:
    with pytest.raises(PairsError, match=r"Line 2 is empty in ref\.fr but not in src\.en"):
        parse_two_files(b"a\nb\nc\n", b"x\n\nz\n", "src.en", "ref.fr")


def test_two_files_latin1_reference_is_named() -> None:
    with pytest.raises(PairsError, match=r"ref\.fr is not UTF-8"):
        parse_two_files(b"a cafe\n", "un café\n".encode("cp1252"), "src.en", "ref.fr")


# ----------------------------------------------------------------------------------------------
# Heatmaps, gold links and the fixed-context picture
# ----------------------------------------------------------------------------------------------


def test_links_frame_splits_sure_possible_and_drops_out_of_range() -> None:
    df = links_frame(["a", "b", "</s>"], ["x", "y"], sure={(0, 0)}, possible={(0, 0), (1, 1), (5, 0)},
                       predicted={(1, 0)})
    assert sorted(zip(df["link"], df["j"], df["i"])) == [("argmax α", 1, 0), ("possible", 1, 1), ("sure", 0, 0)]


def test_alpha_chart_with_gold_links_has_a_marker_layer() -> None:
    t = make_trace([[0.8, 0.1, 0.1], [0.1, 0.8, 0.1]], ["x", "</s>"])
    chart = trace_alpha_chart(t, sure={(0, 0)}, possible={(1, 1)}, show_argmax=True)
    spec = chart.to_dict()
    assert len(spec["layer"]) == 2
    marks = spec["layer"][1]["encoding"]
    assert marks["shape"]["field"] == "link"
    assert set(spec["layer"][1]["encoding"]["shape"]["scale"]["domain"]) == {"sure", "possible", "argmax α"}
    assert "<svg" in chart_svg(chart)


def test_fixed_context_is_never_drawn_as_a_heatmap_and_says_it_once() -> None:
    t = make_trace([None] * 30, [f"w{i}" for i in range(29)] + ["</s>"], context="fixed")
    assert trace_alpha_chart(t) is None
    spec = trace_chart(t).to_dict()
    data = next(iter(spec["datasets"].values()))
    assert len(data) == 1 and "alpha" not in data[0]  # one band for all 30 words, not 30 bars
    assert data[0]["note"] == "every word reads the same summary c (‖c‖ = 2.00)"
    assert [layer["mark"]["type"] for layer in spec["layer"]] == ["rect", "text"]
    assert spec["layer"][1]["encoding"]["text"]["value"].count("same summary c") == 1
    assert spec["height"] == 20 * 30  # one 20-px row per target word (14 px beyond 40 words)
    assert alpha_stats(t) == {"entropy": None, "max_alpha": None}


def test_heatmap_legends_below_for_a_narrow_column() -> None:
    t = make_trace([[0.9, 0.1], [0.2, 0.8]], ["x", "</s>"])
    right = trace_chart(t, sure={(0, 0)}).to_dict()
    below = trace_chart(t, sure={(0, 0)}, legend="bottom").to_dict()
    legends = [lay["encoding"][ch]["legend"] for lay in below["layer"] for ch in ("color", "shape")
               if ch in lay["encoding"]]
    assert len(legends) == 3 and all(g["orient"] == "bottom" and g["direction"] == "horizontal" for g in legends)
    assert "orient" not in right["layer"][0]["encoding"]["color"]["legend"]
    many = trace_chart(make_trace([[1.0] + [0.0] * 60] * 2, ["x", "</s>"])).to_dict()  # 61 columns: 14-px cells
    assert many["encoding"]["x"]["axis"]["labelAngle"] == -90  # upright words where slanted ones would collide
    assert right["layer"][0]["encoding"]["x"]["axis"]["labelAngle"] == -50


def test_readable_charts_and_one_list_of_length_normalisations() -> None:
    cfg = readable(alt.Chart().mark_point(), 14).to_dict()["config"]
    assert cfg["axis"]["labelFontSize"] == cfg["axis"]["titleFontSize"] == cfg["legend"]["labelFontSize"] == 14
    assert cfg["title"]["fontSize"] == 16 and cfg["axis"]["labelColor"] == "#31333F"
    assert tuple(NORM_LABELS) == tuple(NORM_SHORT) == LENGTH_NORMS == ("none", "length", "gnmt")
    import ui.beam.views as vb

    assert not hasattr(vb, "NORM_LABELS") and not hasattr(vb, "NORMS")
    rows = [{"model": "RNNsearch", "file": "a-rnnsearch.pt", "data": "multi30k (29000 pairs)", "scores": "x 1"},
            {"model": "RNNencdec", "file": "a-rnnencdec.pt", "data": ""}]
    assert model_caption(rows) == ("RNNsearch: a-rnnsearch.pt · RNNencdec: a-rnnencdec.pt · "
                                   "trained on multi30k (29000 pairs)")


def test_alpha_stats_average_entropy_and_peak_over_words() -> None:
    t = make_trace([[1.0, 0.0], [0.5, 0.5], [0.3, 0.7]], ["x", "y", "</s>"])
    s = alpha_stats(t)
    assert s["entropy"] == pytest.approx(math.log(2) / 2)  # </s> left out
    assert s["max_alpha"] == pytest.approx(0.75)


# ----------------------------------------------------------------------------------------------
# Alignment browser and bottleneck tables
# ----------------------------------------------------------------------------------------------


def test_filter_pairs_by_length_and_text() -> None:
    pairs = [("a b c", "x"), ("a b", "Chien"), ("a b c d e", "y")]
    assert filter_pairs(pairs, (2, 3)) == [0, 1]
    assert filter_pairs(pairs, (1, 10), "chien") == [1]
    assert filter_pairs(pairs, (1, 10), "  ") == [0, 1, 2]


def test_selected_row_reads_both_selection_forms() -> None:
    from types import SimpleNamespace

    assert selected_row(SimpleNamespace(selection=SimpleNamespace(rows=[4, 1]))) == 4
    assert selected_row({"selection": {"rows": [2], "columns": []}}) == 2
    assert selected_row({"selection": {"rows": []}}) is None
    assert selected_row(None) is None


def test_browser_rows_aer_and_links(tiny_lm) -> None:
    """A browser row's scores equal sacrebleu's sentence functions and α statistics recomputed with
    numpy; AER against a gold set whose answer does not depend on the links (every (j, i) Sure:
    |A| = 6 target words, |S| = 7 · 6 = 42, AER = 1 − 12/48); links are numpy's argmax of α."""
    import numpy as np
    import sacrebleu

    src, ref = "a man is riding a bike .", "un homme fait du vélo ."
    own = greedy(tiny_lm, [src])[0]
    f = forced(tiny_lm, [src], [ref], pretokenized=True)[0]
    facts = forced_facts(f)
    row = table_row(3, src, ref, own_facts(own, ref), facts)  # as the page builds it, from cached facts
    assert row["#"] == 3 and row["src words"] == 7 and row["ref words"] == 6
    assert row["ref log p"] == pytest.approx(sum(s.logprob for s in f.steps))
    assert row["BLEU"] == round(sacrebleu.sentence_bleu(own.translation, [ref]).score, 2)
    assert row["chrF"] == round(sacrebleu.sentence_chrf(own.translation, [ref]).score, 2)
    words = own.alpha_matrix()[[s.token != "</s>" for s in own.steps]]  # rows of the target words
    assert row["α entropy"] == pytest.approx(np.mean([-(a[a > 0] * np.log(a[a > 0])).sum() for a in words]))
    assert row["max α"] == pytest.approx(words.max(axis=1).mean())
    df = browser_frame([row])
    assert list(df.columns) == BROWSER_COLUMNS
    every = {(j, i) for j in range(7) for i in range(6)}  # source words × target words, no </s>
    assert links_aer(facts["links"], every, every) == pytest.approx(1 - 12 / 48)
    assert links_aer(facts["links"], set(), set()) is None  # no gold links: no AER
    res = links_corpus_aer([facts["links"]] * 2, [every, set()], [every, set()])  # |A| = 12, |S| = 42, |A∩S| = 6
    assert res["aer"] == pytest.approx(1 - 12 / 54) and res["sentences"] == 2
    best = np.argmax(f.alpha_matrix()[:-1, :-1], axis=1)
    links = " ".join(f"{j}-{i}" for j, i in sorted((int(j), i) for i, j in enumerate(best)))
    assert links_table([facts["links"]], [3]).splitlines() == ["#,links", f"3,{links}"]
    sure = {(0, 0), (1, 1), (5, 4)}
    fixed = make_trace([None, None], ["x", "</s>"], context="fixed")
    with pytest.raises(ValueError, match="no α"):
        links_corpus_aer([forced_facts(fixed)["links"]], [sure], [sure])
    assert links_aer(forced_facts(fixed)["links"], sure, sure) is None


def test_table_rows_from_cached_facts() -> None:
    """Hand-made α: "x" looks at s0 (0.7), "y" at s1 (0.6); </s> is no word. Gold S = {(0, 0)},
    P = S ∪ {(1, 0)}: |A| = 2, |S| = 1, |A∩S| = |A∩P| = 1, so AER = 1 − 2/3."""
    f = make_trace([[0.7, 0.2, 0.1], [0.1, 0.6, 0.3], [0.2, 0.2, 0.6]], ["x", "y", "</s>"])
    facts = forced_facts(f)
    assert facts == {"ref log p": pytest.approx(-1.5), "links": frozenset({(0, 0), (1, 1)})}
    assert forced_facts(make_trace([None, None], ["x", "</s>"], context="fixed"))["links"] is None
    assert links_aer(facts["links"], {(0, 0)}, {(1, 0)}) == pytest.approx(1 / 3)
    assert links_aer(facts["links"], set(), set()) is None and links_aer(None, {(0, 0)}, set()) is None
    own = own_facts(f, "Un chien .")

    def h(*p: float) -> float:
        return -sum(x * math.log(x) for x in p)

    assert own["translation"] == "" and own["src words"] == 2 and own["BLEU"] == 0.0
    assert own["α entropy"] == pytest.approx((h(0.7, 0.2, 0.1) + h(0.1, 0.6, 0.3)) / 2)  # </s> left out
    assert own["max α"] == pytest.approx((0.7 + 0.6) / 2)
    assert scoring_text("Un chien.", "Un chien .", True, Tokenizer("fr")) == ("un chien .", "un chien .")
    assert scoring_text("Un chien.", "Un chien .", False) == ("Un chien.", "Un chien .")
    row = table_row(7, "a dog", "un chien .", own, facts, ({(0, 0)}, {(1, 0)}))
    assert row["#"] == 7 and row["ref words"] == 3 and row["AER"] == pytest.approx(1 / 3)
    df = browser_frame([row])
    assert list(df.columns[:5]) == ["#", "BLEU", "chrF", "AER", "flags"]  # scores first, texts last
    assert list(df.columns[-3:]) == ["source", "reference", "translation"]
    res = links_corpus_aer([facts["links"], frozenset({(0, 0)})], [{(0, 0)}, {(0, 0)}], [{(1, 0)}, set()])
    assert res["aer"] == pytest.approx(1 - 4 / 5) and res["sentences"] == 2  # |A| = 3, |S| = 2, hits 2 + 2
    with pytest.raises(ValueError, match="no α"):
        links_corpus_aer([None], [set()], [set()])
    assert links_table([facts["links"], None], [4, 9]).splitlines() == ["#,links", "4,0-0 1-1", "9,"]


def test_shared_store_keeps_the_recent_and_computes_only_what_is_missing() -> None:
    from ui.common.heavy import ENTRY_BYTES
    from ui.common.widgets import SharedStore, cached_items

    store = SharedStore(max_bytes=3 * (len(pickle.dumps("A", protocol=5)) + ENTRY_BYTES))  # room for three
    for k in "abc":
        store.put(k, k.upper())
    assert store.get("a") == "A"  # a is now the most recent: b goes first
    store.put("d", "D")
    assert store.get("b", None) is None and [store.get(k) for k in "acd"] == ["A", "C", "D"] and len(store) == 3
    calls: list[list[int]] = []

    def compute(part: list[int]) -> list[str]:
        calls.append(part)
        return [keys[p] * 2 for p in part]

    keys = ["a", "x", "c", "y", "z"]
    assert cached_items(store, keys, compute, "test", chunk=2) == ["A", "xx", "C", "yy", "zz"]
    assert calls == [[1, 3], [4]]  # only the missing keys, two at a time
    calls.clear()
    assert cached_items(store, ["z", "y"], compute, "test") == ["zz", "yy"] and calls == []


def test_comparison_row_and_logp_chart() -> None:
    own = make_trace([[1.0, 0.0], [0.0, 1.0]], ["Un", "</s>"])
    own.translation = "Un"
    ref_trace = make_trace([[1.0, 0.0], [0.0, 1.0]], ["Un", "</s>"])
    row = comparison_row("RNNsearch", own, ref_trace, "Un")
    assert row["log p (reference)"] == pytest.approx(-1.0) and row["log p / word (reference)"] == pytest.approx(-0.5)
    assert row["BLEU"] is not None and row["words"] == 1
    bare = comparison_row("RNNencdec", own, None, None)
    assert bare["log p (reference)"] is None and bare["BLEU"] is None
    assert isinstance(logp_chart([row, bare]), alt.Chart)
    assert logp_chart([bare]) is None


def test_length_picking_and_sweep() -> None:
    sources = ["a b", "a b c", "a b c d e f g h i j k l", "a b c"]
    assert pick_by_length(sources, 3) == [1, 3]
    assert pick_by_length(sources, 7) == [1, 3]  # nearest length present
    assert sweep_sample(sources, width=5, per_bucket=2) == [0, 1, 2]
    refs = ["the cat sat on the mat", "a dog ran in the park", "x y z w", "two men play chess outside"]
    df = sweep_frame([2, 3, 12, 3], {"m1": refs, "m2": ["q"] * 4}, refs, {"m1": [-1.0, -2.0, None, -3.0]}, width=5)
    m1 = df[df["model"] == "m1"].set_index("lo")
    assert m1.loc[0, "BLEU"] == pytest.approx(100.0) and m1.loc[0, "ref log p / word"] == pytest.approx(-2.0)
    assert m1.loc[10, "n"] == 1
    assert sweep_chart(df) is not None and sweep_chart(df.iloc[:0]) is None


def test_domain_note_only_for_a_model_trained_elsewhere() -> None:
    from ui.figures.alignment import domain_note

    note = domain_note("multi30k (29000 pairs)", "alignment/hansards-naacl2003-en-fr/test")
    assert note is not None and note.startswith("Out of domain: this model was trained on multi30k (29000 pairs)")
    assert domain_note("europarl-v7-fr-en (492274 pairs)", "alignment/hansards-naacl2003-en-fr/test") is None
    assert domain_note("multi30k (29000 pairs)", "pasted pairs") is None  # no gold set, nothing to warn about
    assert domain_note("", "alignment/hansards-naacl2003-en-fr/trial").startswith(
        "Out of domain: this model was trained on an unknown corpus")
