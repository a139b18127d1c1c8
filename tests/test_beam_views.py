"""Unit tests of the beam explorer's builders (ui.beam.views): no browser, no Streamlit session."""

from __future__ import annotations

from pathlib import Path

import pytest

from nmt.decoding.search import LENGTH_NORMS, beam_search, greedy, length_penalty
from nmt.decoding.trace import DecodeTrace
from tests.traces import make_beam_trace, make_hyp, make_trace
from ui.beam.views import (
    DEFAULT_SENTENCE,
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
    winners,
)
from ui.figures.common import chart_png

SHIPPED = Path(__file__).resolve().parent.parent / "checkpoints" / "m30k-en-fr-rnnsearch.pt"


# ----------------------------------------------------------------------------------------------
# Beam search: tree data, steps, ranking, divergence
# ----------------------------------------------------------------------------------------------


def test_beam_nodes_build_the_tree() -> None:
    t = make_beam_trace()
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
    t = make_beam_trace()
    nodes = beam_nodes(t, layout="rank", show_pruned=False)
    assert "pruned" not in set(nodes["status"])
    assert (nodes["y"] == nodes["rank"]).all()
    with pytest.raises(ValueError):
        beam_nodes(t, layout="spiral")


def test_beam_nodes_mark_the_greedy_path() -> None:
    t = make_beam_trace()
    g = make_trace([[1.0, 0.0]] * 3, ["B", "y", "</s>"])
    nodes = beam_nodes(t, greedy=g)
    assert set(nodes.loc[nodes["on_greedy"], "id"]) == {0, 2, 6, 9}


def test_beam_tree_chart_renders_with_hover_details() -> None:
    nodes = beam_nodes(make_beam_trace())
    chart = beam_tree_chart(nodes, divergence=0)
    spec = chart.to_dict()
    point_layer = next(layer for layer in spec["layer"] if layer["mark"]["type"] == "point")
    fields = {t["field"] for t in point_layer["encoding"]["tooltip"]}
    assert {"text", "logprob", "score", "status", "nbest_label"} <= fields
    assert chart_png(chart)[:8] == b"\x89PNG\r\n\x1a\n"
    assert beam_tree_chart(nodes.iloc[:1]) is None


def test_beam_tree_chart_fits_its_width_with_legends_below() -> None:
    nodes = beam_nodes(make_beam_trace())  # steps -1..2: 4 columns
    wide, narrow = beam_tree_chart(nodes).to_dict(), beam_tree_chart(nodes, max_width=200).to_dict()
    assert wide["width"] == 420 and narrow["width"] == 200
    texts = [lay for lay in wide["layer"] if lay["mark"]["type"] == "text"]
    assert len(texts) == 1 and texts[0]["mark"]["fontSize"] == 14  # the tab's main content
    assert len(wide["datasets"][texts[0]["data"]["name"]]) == 10  # 105 px a step: every node's word
    text = next(lay for lay in narrow["layer"] if lay["mark"]["type"] == "text")
    assert sorted(r["id"] for r in narrow["datasets"][text["data"]["name"]]) == [0, 1, 5, 8, 9]  # best path, n-best
    legends = [lay["encoding"][c]["legend"] for lay in wide["layer"] for c in ("color", "shape", "stroke")
               if c in lay["encoding"] and lay["encoding"][c].get("legend")]
    assert legends and all(g["orient"] == "bottom" for g in legends)


def test_beam_step_frames() -> None:
    t = make_beam_trace()
    df = beam_step_frame(t, 1)
    assert list(df["fate"]) == ["live", "live", "finished", "pruned"]
    assert list(df.loc[df["fate"] == "live", "hypothesis"]) == ["A x", "B y"]
    assert beam_step_frame(t, 7).empty
    all_ = beam_all_frame(t)
    assert len(all_) == 9 and list(all_.columns[:2]) == ["step", "fate"]


def test_rerank_frame_shows_length_normalisation_changing_the_winner() -> None:
    t = make_beam_trace()
    df = rerank_frame(t).set_index("hypothesis")
    # raw log p: "A x" (-0.9) beats "B y" (-1.5) beats "A" (-2.0)
    assert df.loc["A x", "rank none"] == 1 and df.loc["A", "rank none"] == 3
    assert df.loc["A", "score length"] == pytest.approx(-2.0 / 2)
    assert df.loc["B y", "score gnmt"] == pytest.approx(-1.5 / length_penalty(3, "gnmt"))
    t.beam_steps[0].finished.append(make_hyp(10, 0, 0, ["</s>"], -0.8, "finished"))
    df = rerank_frame(t).set_index("hypothesis")
    assert df.loc["", "rank none"] == 1  # the empty output wins without normalisation...
    assert df.loc["A x", "rank length"] == 1  # ...but not once scores are divided by length
    assert winners(rerank_frame(t)) == {"none": "", "length": "A x", "gnmt": "A x"}  # gnmt: -0.9/1.28 vs -0.8/1
    spec = rerank_chart(rerank_frame(t)).to_dict()
    words = spec["layer"][1]
    assert words["mark"]["type"] == "text" and words["encoding"]["text"]["field"] == "hypothesis"
    assert words["transform"] == [{"filter": "(datum.normalisation === 'GNMT')"}]
    assert winners(rerank_frame(DecodeTrace("", [], [], "beam", "attention"))) == {}


def test_rerank_frame_writes_hypotheses_with_the_models_detokeniser() -> None:
    """A subword model's pieces are joined as its translation is (here a BPE-like rule by hand), </s> left out."""
    t = make_beam_trace()
    t.beam_steps[2].finished.append(make_hyp(11, 6, 2, ["caf@@", "é", "</s>"], -1.7, "finished"))
    df = rerank_frame(t, detok=lambda toks: " ".join(toks).replace("@@ ", "").upper())
    assert sorted(df["hypothesis"]) == ["A", "A X", "B Y", "CAFÉ"]
    assert sorted(rerank_frame(t)["hypothesis"]) == ["A", "A x", "B y", "caf@@ é"]


@pytest.mark.skipif(not SHIPPED.exists(), reason="the shipped checkpoint is absent")
def test_default_sentence_has_three_winners_on_the_shipped_model() -> None:
    """The explorer opens on a sentence where the three normalisations choose three translations."""
    from nmt.models import checkpoint

    lm = checkpoint.load(SHIPPED)
    best = {n: beam_search(lm, [DEFAULT_SENTENCE], beam=5, n_best=5, length_norm=n)[0].translation
            for n in LENGTH_NORMS}
    assert len(set(best.values())) == 3, best
    assert len(best["none"]) < len(best["gnmt"]) < len(best["length"])  # raw log p prefers the shortest
    trace = beam_search(lm, [DEFAULT_SENTENCE], beam=5, n_best=5, length_norm="length")[0]
    assert len(set(winners(rerank_frame(trace)).values())) == 3  # what the page's last tab shows


def test_divergence_finds_the_first_differing_step_and_pruned_greedy_path() -> None:
    t = make_beam_trace()
    same = make_trace([[1.0, 0.0]] * 3, ["A", "x", "</s>"])
    assert divergence(same, t).step is None
    g = make_trace([[1.0, 0.0]] * 3, ["B", "z", "</s>"])
    d = divergence(g, t)
    assert (d.step, d.greedy_word, d.beam_word, d.greedy_pruned_at) == (0, "B", "A", 1)


def test_nbest_alpha_chart_and_cells() -> None:
    t = make_beam_trace()
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
