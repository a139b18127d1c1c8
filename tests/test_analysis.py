"""Unit tests of the analysis pages' builders (ui.views): no browser, no Streamlit session."""

from __future__ import annotations

import math

import altair as alt
import pytest

from nmt.decoding import beam_search, forced, greedy, length_penalty
from nmt.trace import BeamStep, DecodeTrace, Hypothesis, NBestEntry, StepRecord
from ui.views.alignment import (
    BROWSER_COLUMNS,
    browser_frame,
    browser_row,
    corpus_aer,
    filter_pairs,
    links_csv,
    selected_row,
    sentence_aer,
)
from ui.views.beam import (
    beam_all_frame,
    beam_edges,
    beam_nodes,
    beam_step_frame,
    beam_tree_chart,
    divergence,
    nbest_alpha_chart,
    nbest_cells,
    nbest_frame,
    rerank_chart,
    rerank_frame,
)
from ui.views.bottleneck import comparison_row, logp_chart, pick_by_length, sweep_chart, sweep_frame, sweep_sample
from ui.views.common import chart_png, chart_svg
from ui.views.heatmaps import alpha_stats, links_frame, trace_alpha_chart, trace_chart
from ui.views.uploads import MAX_PAIRS, PairsError, parse_tsv_pairs, parse_two_files

# ----------------------------------------------------------------------------------------------
# Hand-made traces
# ----------------------------------------------------------------------------------------------


def _step(i: int, token: str, alpha: list[float] | None, logprob: float = -0.5) -> StepRecord:
    return StepRecord(i=i, token=token, token_id=4 + i, logprob=logprob, forced=False, energies=None,
                      alpha=alpha, topk=[(token, math.exp(logprob))], state_norm=1.0, context_norm=2.0)


def _trace(
    alphas: list[list[float] | None], tokens: list[str] | None = None, context: str = "attention"
) -> DecodeTrace:
    tokens = tokens or [f"w{i}" for i in range(len(alphas))]
    n_src = max((len(a) for a in alphas if a is not None), default=3)
    src = [f"s{j}" for j in range(n_src - 1)] + ["</s>"]
    return DecodeTrace(source=" ".join(src[:-1]), src_tokens=src, src_unk=[False] * n_src, method="forced",
                       context=context, steps=[_step(i, t, a) for i, (t, a) in enumerate(zip(tokens, alphas))])


def _h(id_: int, parent: int, step: int, tokens: list[str], logprob: float, status: str) -> Hypothesis:
    return Hypothesis(id_, parent, step, tokens[-1], tokens, logprob, logprob, status == "finished", status)


def _beam_trace() -> DecodeTrace:
    """k = 2: step 0 keeps A, B (C pruned); step 1 finishes "A </s>", keeps "A x", "B y" (B z pruned);
    step 2 finishes "A x </s>" and "B y </s>"."""
    steps = [
        BeamStep(live=[_h(1, 0, 0, ["A"], -0.1, "live"), _h(2, 0, 0, ["B"], -1.0, "live")],
                 pruned=[_h(3, 0, 0, ["C"], -3.0, "pruned")]),
        BeamStep(live=[_h(5, 1, 1, ["A", "x"], -0.5, "live"), _h(6, 2, 1, ["B", "y"], -1.2, "live")],
                 pruned=[_h(7, 2, 1, ["B", "z"], -4.0, "pruned")],
                 finished=[_h(4, 1, 1, ["A", "</s>"], -2.0, "finished")]),
        BeamStep(finished=[_h(8, 5, 2, ["A", "x", "</s>"], -0.9, "finished"),
                           _h(9, 6, 2, ["B", "y", "</s>"], -1.5, "finished")]),
    ]
    nbest = [NBestEntry(["A", "x", "</s>"], "A x", -0.9, -0.3, [[0.9, 0.1]] * 3),
             NBestEntry(["B", "y", "</s>"], "B y", -1.5, -0.5, [[0.2, 0.8]] * 3)]
    t = DecodeTrace(source="s0", src_tokens=["s0", "</s>"], src_unk=[False, False], method="beam", context="attention",
                    steps=[_step(0, "A", [0.9, 0.1]), _step(1, "x", [0.9, 0.1]), _step(2, "</s>", [0.9, 0.1])],
                    nbest=nbest, beam_size=2, length_norm="length", beam_steps=steps)
    t.translation = "A x"
    return t


# ----------------------------------------------------------------------------------------------
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
    t = _trace([[0.8, 0.1, 0.1], [0.1, 0.8, 0.1]], ["x", "</s>"])
    chart = trace_alpha_chart(t, sure={(0, 0)}, possible={(1, 1)}, show_argmax=True)
    spec = chart.to_dict()
    assert len(spec["layer"]) == 2
    marks = spec["layer"][1]["encoding"]
    assert marks["shape"]["field"] == "link"
    assert set(spec["layer"][1]["encoding"]["shape"]["scale"]["domain"]) == {"sure", "possible", "argmax α"}
    assert "<svg" in chart_svg(chart)


def test_fixed_context_is_never_drawn_as_a_heatmap() -> None:
    t = _trace([None, None], ["x", "</s>"], context="fixed")
    assert trace_alpha_chart(t) is None
    chart = trace_chart(t)
    spec = chart.to_dict()
    data = next(iter(spec["datasets"].values()))
    assert "alpha" not in data[0] and data[0]["note"] == "reads the same summary c"
    assert all(layer["mark"]["type"] in ("bar", "text") for layer in spec["layer"])
    assert alpha_stats(t) == {"entropy": None, "max_alpha": None}


def test_alpha_stats_average_entropy_and_peak_over_words() -> None:
    t = _trace([[1.0, 0.0], [0.5, 0.5], [0.3, 0.7]], ["x", "y", "</s>"])
    s = alpha_stats(t)
    assert s["entropy"] == pytest.approx(math.log(2) / 2)  # </s> left out
    assert s["max_alpha"] == pytest.approx(0.75)


# ----------------------------------------------------------------------------------------------
# Beam search: tree data, steps, ranking, divergence
# ----------------------------------------------------------------------------------------------


def test_beam_nodes_build_the_tree() -> None:
    t = _beam_trace()
    nodes = beam_nodes(t)
    assert len(nodes) == 1 + 9
    ids = set(nodes["id"])
    assert all(p in ids for p in nodes.loc[nodes["id"] != 0, "parent"])
    by_id = nodes.set_index("id")
    assert by_id.loc[8, "nbest"] == 1 and by_id.loc[9, "nbest"] == 2 and by_id.loc[4, "nbest"] == 0
    assert set(nodes.loc[nodes["on_best"], "id"]) == {0, 1, 5, 8}
    assert by_id.loc[3, "status"] == "pruned" and by_id.loc[0, "status"] == "start"
    assert list(by_id.loc[[1, 2, 3], "rank"]) == [0, 1, 2]
    # tree layout: a parent sits between its first and last child
    for pid in (0, 1, 2, 5, 6):
        kids = nodes[nodes["parent"] == pid]["y"]
        assert kids.min() <= by_id.loc[pid, "y"] <= kids.max()
    edges = beam_edges(nodes)
    assert len(edges) == len(nodes) - 1
    assert set(edges.loc[edges["on_best"], "child"]) == {1, 5, 8}


def test_beam_nodes_rank_layout_and_hiding_pruned() -> None:
    t = _beam_trace()
    nodes = beam_nodes(t, layout="rank", show_pruned=False)
    assert "pruned" not in set(nodes["status"])
    assert (nodes["y"] == nodes["rank"]).all()
    with pytest.raises(ValueError):
        beam_nodes(t, layout="spiral")


def test_beam_nodes_mark_the_greedy_path() -> None:
    t = _beam_trace()
    g = _trace([[1.0, 0.0]] * 3, ["B", "y", "</s>"])
    nodes = beam_nodes(t, greedy=g)
    assert set(nodes.loc[nodes["on_greedy"], "id"]) == {0, 2, 6, 9}


def test_beam_tree_chart_renders_with_hover_details() -> None:
    nodes = beam_nodes(_beam_trace())
    chart = beam_tree_chart(nodes, divergence=0)
    spec = chart.to_dict()
    point_layer = next(layer for layer in spec["layer"] if layer["mark"]["type"] == "point")
    fields = {t["field"] for t in point_layer["encoding"]["tooltip"]}
    assert {"text", "logprob", "score", "status", "nbest_label"} <= fields
    assert chart_png(chart)[:8] == b"\x89PNG\r\n\x1a\n"
    assert beam_tree_chart(nodes.iloc[:1]) is None


def test_beam_step_frames() -> None:
    t = _beam_trace()
    df = beam_step_frame(t, 1)
    assert list(df["fate"]) == ["live", "live", "finished", "pruned"]
    assert list(df.loc[df["fate"] == "live", "hypothesis"]) == ["A x", "B y"]
    assert beam_step_frame(t, 7).empty
    all_ = beam_all_frame(t)
    assert len(all_) == 9 and list(all_.columns[:2]) == ["step", "fate"]


def test_rerank_frame_shows_length_normalisation_changing_the_winner() -> None:
    t = _beam_trace()
    df = rerank_frame(t).set_index("hypothesis")
    # raw log p: "A x" (-0.9) beats "B y" (-1.5) beats "A" (-2.0)
    assert df.loc["A x", "rank none"] == 1 and df.loc["A", "rank none"] == 3
    assert df.loc["A", "score length"] == pytest.approx(-2.0 / 2)
    assert df.loc["B y", "score gnmt"] == pytest.approx(-1.5 / length_penalty(3, "gnmt"))
    t.beam_steps[0].finished.append(_h(10, 0, 0, ["</s>"], -0.8, "finished"))
    df = rerank_frame(t).set_index("hypothesis")
    assert df.loc["", "rank none"] == 1  # the empty output wins without normalisation...
    assert df.loc["A x", "rank length"] == 1  # ...but not once scores are divided by length
    assert rerank_chart(rerank_frame(t)) is not None


def test_divergence_finds_the_first_differing_step_and_pruned_greedy_path() -> None:
    t = _beam_trace()
    same = _trace([[1.0, 0.0]] * 3, ["A", "x", "</s>"])
    assert divergence(same, t).step is None
    g = _trace([[1.0, 0.0]] * 3, ["B", "z", "</s>"])
    d = divergence(g, t)
    assert (d.step, d.greedy_word, d.beam_word, d.greedy_pruned_at) == (0, "B", "A", 1)


def test_nbest_alpha_chart_and_cells() -> None:
    t = _beam_trace()
    assert nbest_alpha_chart(t, 2) is not None and nbest_alpha_chart(t, 3) is None
    cells = nbest_cells(t, 2)
    assert len(cells) == 3 * 2 and cells["alpha"].max() == pytest.approx(0.8)
    assert list(nbest_frame(t)["rank"]) == [1, 2]


def test_real_beam_trace_tree_matches_the_nbest(tiny_lm) -> None:
    sent = "A man is riding a bike."
    t = beam_search(tiny_lm, [sent], beam=3, n_best=3, length_norm="none")[0]
    g = greedy(tiny_lm, [sent])[0]
    nodes = beam_nodes(t, g)
    assert sorted(v for v in nodes["nbest"] if v) == list(range(1, len(t.nbest) + 1))
    best = nodes[nodes["nbest"] == 1].iloc[0]
    assert best["text"].split() == t.nbest[0].tokens
    assert nodes["on_best"].sum() == len(t.nbest[0].tokens) + 1
    assert divergence(g, beam_search(tiny_lm, [sent], beam=1)[0]).step is None


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
    row = browser_row(3, src, ref, own, f)
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
    assert sentence_aer(f, every, every) == pytest.approx(1 - 12 / 48)
    assert sentence_aer(f, set(), set()) is None  # no gold links: no AER
    res = corpus_aer([f, f], [every, set()], [every, set()])  # |A| = 12, |S| = 42, |A∩S| = 6
    assert res["aer"] == pytest.approx(1 - 12 / 54) and res["sentences"] == 2
    best = np.argmax(f.alpha_matrix()[:-1, :-1], axis=1)
    links = " ".join(f"{j}-{i}" for j, i in sorted((int(j), i) for i, j in enumerate(best)))
    assert links_csv([f], [3]).splitlines() == ["#,links", f"3,{links}"]
    sure = {(0, 0), (1, 1), (5, 4)}
    fixed = _trace([None, None], ["x", "</s>"], context="fixed")
    with pytest.raises(ValueError, match="no α"):
        corpus_aer([fixed], [sure], [sure])
    assert sentence_aer(fixed, sure, sure) is None


def test_comparison_row_and_logp_chart() -> None:
    own = _trace([[1.0, 0.0], [0.0, 1.0]], ["Un", "</s>"])
    own.translation = "Un"
    ref_trace = _trace([[1.0, 0.0], [0.0, 1.0]], ["Un", "</s>"])
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
