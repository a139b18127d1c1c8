"""One colour per model on every page (issue 21): the same checkpoint, or its entry in a results
file, gets the same colour from every view builder that colours models.

The expected colours are written out by hand from the scheme in :mod:`nmt.models.kinds` (blues for
RNNsearch, oranges for RNNencdec; "-30" light, "-50" dark, others the middle shade; red for the
frozen ablation; Luong's attention types their own hue), not computed with the function tested.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from nmt.models.kinds import colour_of_name
from nmt.models.registry import describe_model
from ui.common import checkpoint_files, models
from ui.figures.bottleneck import logp_chart, sweep_chart
from ui.figures.common import model_heading
from ui.figures.length import curve_figure, length_figure
from ui.figures.stepper_charts import drift_chart
from ui.figures.stepper_html import compare_html
from ui.lesson import views as L

ROOT = Path(__file__).resolve().parent.parent
SEARCH, ENCDEC = {"context": "attention"}, {"context": "fixed"}
LUONG = {"arch": "luong", "attention": "local-p", "score": "general", "context": "attention"}
# (config, context, checkpoint file stem, name in a results file, the colour, by hand)
MODELS = [
    (SEARCH, None, "m30k-en-fr-rnnsearch", "rnnsearch", "#206fb2"),
    (ENCDEC, None, "m30k-en-fr-rnnencdec", "rnnencdec", "#e6550d"),
    (SEARCH, None, "europarl-en-fr-rnnsearch-50", "RNNsearch-50", "#08306b"),
    (ENCDEC, None, "europarl-en-fr-rnnencdec-50", "RNNencdec-50", "#a63603"),
    (SEARCH, None, "europarl-en-fr-rnnsearch-30", "RNNsearch-30", "#4292c6"),
    (ENCDEC, None, "europarl-en-fr-rnnencdec-30", "RNNencdec-30", "#fd8d3c"),
    (LUONG, None, "m30k-en-fr-luong-local-p", "luong-local-p", "#c51b7d"),
    ({**LUONG, "attention": "global"}, None, "m30k-en-fr-luong-global-general", "luong-global-general", "#01665e"),
    ({**LUONG, "attention": "global", "score": "dot"}, None, "m30k-en-fr-luong-global-dot", "luong-global-dot",
     "#2a7f78"),
    ({**LUONG, "attention": "global", "score": "concat"}, None, "m30k-en-fr-luong-global-concat",
     "luong-global-concat", "#003c30"),
    ({**LUONG, "attention": "local-m"}, None, "m30k-en-fr-luong-local-m", "luong-local-m", "#8c510a"),
]
SHIPPED = {"m30k-en-fr-rnnsearch.pt": "#206fb2", "m30k-en-fr-rnnencdec.pt": "#e6550d",
           "europarl-en-fr-rnnsearch-50.pt": "#08306b", "europarl-en-fr-rnnencdec-50.pt": "#a63603",
           "m30k-en-fr-luong-local-p.pt": "#c51b7d", "m30k-en-fr-luong-global-general.pt": "#01665e",
           "m30k-en-fr-luong-global-dot.pt": "#2a7f78", "m30k-en-fr-luong-global-concat.pt": "#003c30",
           "m30k-en-fr-luong-local-m.pt": "#8c510a",
           "europarl-tatoeba-en-fr-rnnsearch-30k.pt": "#206fb2"}  # neither -30 nor -50 in its name: the middle shade


def _scale(chart: object) -> dict[str, str]:
    """Model name → colour of an Altair chart's colour scale."""
    spec = chart.to_dict()
    enc = (spec.get("encoding") or spec["layer"][0]["encoding"])["color"]
    return dict(zip(enc["scale"]["domain"], enc["scale"]["range"]))


def test_descriptions_and_results_names_agree() -> None:
    for config, context, stem, results_name, colour in MODELS:
        assert describe_model(config, context, stem).colour == colour, stem
        assert colour_of_name(results_name) == colour, results_name
    assert describe_model(SEARCH, "fixed", "m30k-en-fr-rnnsearch").colour == "#b2182b"  # the frozen ablation


def test_shipped_checkpoints_carry_their_colour() -> None:
    groups = checkpoint_files.scan(ROOT / "checkpoints")
    found = {c.name: models.description(c).colour for g in groups for c in g.members}
    assert found == SHIPPED


def test_every_builder_draws_a_model_in_its_colour() -> None:
    names = [m[3] for m in MODELS]
    want = {m[3]: m[4] for m in MODELS}
    rows = pd.DataFrame([{"model": n, "test": "t", "decoding": "greedy", "lo": lo, "hi": lo + 10,
                          "bucket": f"{lo}–{lo + 9}", "n": 20, "bleu": 30.0, "ci95": None}
                         for n in names for lo in (0, 10)])
    assert {t.name: t.line.color for t in length_figure(rows).data} == want  # Length vs quality (Plotly)
    curves = pd.DataFrame([{"model": n, "update": 1, "epoch": 1, "valid BLEU": 20.0, "elapsed_s": 1.0} for n in names])
    assert {t.name: t.line.color for t in curve_figure(curves).data} == want
    # the Lesson's Fig. 2, which names the Multi30k pair as the paper does (rnnsearch: RNNsearch), same colours
    assert _scale(L.fig2_chart(rows[["model", "bucket", "lo", "n", "bleu"]])) == \
        {L.paper_name(n): c for n, c in want.items()}
    sweep = pd.DataFrame([{"model": n, "lo": 0, "length": "0–4", "n": 3, "BLEU": 20.0} for n in names])
    assert _scale(sweep_chart(sweep)) == want  # Bottleneck side by side, by results name
    # ... and by the description a page carries, under the page's own display names
    shown = {"RNNsearch": "#08306b", "RNNencdec": "#a63603", "RNNsearch, c_i frozen": "#b2182b"}
    sweep = pd.DataFrame([{"model": n, "lo": 0, "length": "0–4", "n": 3, "BLEU": 20.0} for n in shown])
    assert _scale(sweep_chart(sweep, colours=shown)) == shown
    logp = [{"model": n, "log p (reference)": -3.0, "log p / word (reference)": -0.5} for n in shown]
    assert _scale(logp_chart(logp, colours=shown)) == shown
    series = [("RNNsearch", ["a", "b"], [0.0, 0.4]), ("RNNencdec", ["a", "b"], [0.0, 0.0])]
    assert _scale(drift_chart(series, colours=["#08306b", "#a63603"])) == {"RNNsearch": "#08306b",
                                                                          "RNNencdec": "#a63603"}  # the stepper
    html = compare_html("RNNsearch", ["un"], "RNNencdec", ["une"], colours=["#08306b", "#a63603"])
    assert html.index("#08306b") < html.index("RNNsearch") < html.index("#a63603") < html.index("RNNencdec")
    assert "border-left:8px solid #c51b7d" in model_heading("Luong 2015, local-p", "#c51b7d")  # Compare attention


@pytest.mark.parametrize("name", ["RNNsearch-50", "rnnencdec", "luong-local-p"])
def test_a_colour_is_the_same_whatever_else_is_drawn(name: str) -> None:
    """A model's colour does not depend on which other models share the chart (it once did: the
    lesson's Fig. 2 shaded a family light to dark in the order given)."""
    alone = pd.DataFrame([{"model": name, "bucket": "0–9", "lo": 0, "n": 20, "bleu": 30.0}])
    crowd = pd.concat([alone, alone.assign(model="RNNsearch-30"), alone.assign(model="RNNencdec-30")])
    shown = L.paper_name(name)  # the lesson's name for it (RNNsearch for rnnsearch), in the same colour
    assert _scale(L.fig2_chart(alone))[shown] == _scale(L.fig2_chart(crowd))[shown] == colour_of_name(name)
