"""The three analysis pages driven through streamlit.testing (AppTest), on the tiny models.

Each page is run on its own (as ``st.navigation`` runs it), with the tiny RNNsearch / RNNencdec
pair as the checkpoint folder and a small data directory made from the test fixtures.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from nmt.decoding import search as decoding
from nmt.decoding.search import LENGTH_NORMS
from nmt.explanation.align import alignment_error, argmax_links, read_links
from nmt.models import checkpoint
from nmt.text import corpora
from tests.conftest import plain
from tests.page_app import app_at
from ui.beam.views import DEFAULT_SENTENCE

ROOT = Path(__file__).resolve().parent.parent
TINY_DATA = ROOT / "tests" / "fixtures" / "tiny"
TIMEOUT = 120
GOLD = "alignment/hansards-naacl2003-en-fr/test"


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """multi30k/{test_2016_flickr (gzipped), val} from the fixtures and a small gold alignment set."""
    d = tmp_path_factory.mktemp("data")
    m30k = d / "multi30k"
    m30k.mkdir()
    for lang in ("en", "fr"):
        with gzip.open(m30k / f"test_2016_flickr.{lang}.gz", "wt", encoding="utf-8") as f:
            f.write((TINY_DATA / f"test.{lang}").read_text(encoding="utf-8"))
        shutil.copy(TINY_DATA / f"val.{lang}", m30k / f"val.{lang}")
    gold = d / GOLD.rsplit("/", 1)[0]
    gold.mkdir(parents=True)
    files = {
        "test.en": "a man is riding a bike .\ntwo dogs are playing in the snow .\na woman is reading a book .\n",
        "test.fr": "un homme fait du vélo .\ndeux chiens jouent dans la neige .\nune femme lit un livre .\n",
        "test.en-fr.sure": "0-0 1-1 5-4 6-5\n0-0 1-1 6-5 7-6\n0-0 1-1 4-4 5-5\n",
        "test.en-fr.possible": "0-0 1-1 2-2 3-2 5-4 6-5\n0-0 1-1 6-5 7-6\n0-0 1-1 3-2 4-4 5-5\n",
    }
    for name, text in files.items():
        (gold / name).write_text(text, encoding="utf-8")
    return d


@pytest.fixture
def env(tiny_checkpoint_dir: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(tiny_checkpoint_dir))
    monkeypatch.setenv("RNNSEARCH_DATA", str(data_dir))
    return data_dir


def run(page: str, **params: Any) -> AppTest:
    """Run a page once with the given URL query parameters."""
    at = app_at(f"pages/{page}", TIMEOUT)
    at.query_params.update({k: v for k, v in params.items()})
    at.run()
    assert not at.exception, at.exception
    return at



def markdown(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def downloads(at: AppTest) -> list[str]:
    return [d.label for d in at.get("download_button")]


def charts(at: AppTest) -> list[Any]:
    return list(at.get("vega_lite_chart"))


def bound_keys(at: AppTest, prefix: str) -> dict[str, str]:
    """key → query parameter of every keyed control with the page's prefix."""
    out = {}
    for kind in ("slider", "select_slider", "radio", "selectbox", "text_area", "text_input", "toggle",
                 "number_input", "checkbox"):
        for w in getattr(at, kind):
            if w.key and w.key.startswith(prefix):
                out[w.key] = w.proto.query_param_key
    return out


def assert_all_bound(at: AppTest, prefix: str, unbound: tuple[str, ...] = ()) -> None:
    keys = bound_keys(at, prefix)
    assert keys
    for key, param in keys.items():
        assert param == ("" if key in unbound else key), key


# ----------------------------------------------------------------------------------------------
# Beam search explorer
# ----------------------------------------------------------------------------------------------


def test_beam_page_shows_summary_tree_and_downloads(env: Path) -> None:
    at = run("beam_explorer.py")
    text = markdown(at)
    assert "Beam search (k = 5), best hypothesis" in text and "Greedy decoding" in text
    assert [t.label for t in at.tabs] == ["Search tree", "Beam per step", "N-best and α", "Length normalisation"]
    assert len(charts(at)) == 1
    assert downloads(at) == ["PNG", "SVG", "Nodes CSV", "Trace JSON"]
    assert_all_bound(at, "bx_")


def test_beam_page_defaults_and_one_list_of_normalisations(env: Path) -> None:
    at = run("beam_explorer.py")
    assert at.text_area(key="bx_text").value == DEFAULT_SENTENCE
    assert tuple(at.radio(key="bx_norm").options) == LENGTH_NORMS and at.radio(key="bx_norm").value == "length"
    assert not any(m.value.startswith(">") for m in at.markdown)  # translations in dark text, not grey quotes


def test_beam_page_restores_its_view_from_the_url(env: Path) -> None:
    at = run("beam_explorer.py", bx_text="Two dogs are playing in the snow.", bx_beam="3", bx_norm="none",
             bx_nbest="2", bx_tab="Beam per step", bx_step="1")
    assert at.text_area(key="bx_text").value == "Two dogs are playing in the snow."
    assert at.slider(key="bx_beam").value == 3 and at.radio(key="bx_norm").value == "none"
    assert at.slider(key="bx_step").value == 1
    assert "After step **1**" in markdown(at)
    table = at.dataframe[0].value
    assert list(table.columns[:3]) == ["fate", "rank", "hypothesis"]
    assert (table["fate"] == "live").sum() <= 3
    assert downloads(at) == ["This step CSV", "All steps CSV"]


def test_beam_size_one_is_greedy(env: Path) -> None:
    at = run("beam_explorer.py")
    at.slider(key="bx_beam").set_value(1).run()
    assert not at.exception
    assert any("agree on every word" in s.value for s in at.success)
    assert "n-best is capped" in "\n".join(c.value for c in at.caption)


def test_beam_nbest_tab_shows_a_chosen_hypothesis(env: Path) -> None:
    at = run("beam_explorer.py", bx_tab="N-best and α", bx_nbest="3")
    assert len(at.dataframe[0].value) == 3
    at.radio(key="bx_hyp").set_value(2).run()
    assert not at.exception
    assert "**2\\.**" in markdown(at) or "**2.**" in markdown(at)
    assert len(charts(at)) == 1
    assert downloads(at) == ["PNG", "SVG", "α CSV", "N-best CSV"]


def test_beam_normalisation_tab_ranks_under_each_setting(env: Path) -> None:
    at = run("beam_explorer.py", bx_tab="Length normalisation", bx_norm="gnmt", bx_alpha="1.0")
    assert at.slider(key="bx_alpha").value == 1.0
    assert markdown(at).count(" picks “") == 3
    table = at.dataframe[0].value
    assert {"rank none", "rank length", "rank gnmt"} <= set(table.columns)
    assert "Ranking CSV" in downloads(at)


def test_beam_page_with_no_text_or_no_checkpoints(env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = run("beam_explorer.py")
    at.text_area(key="bx_text").input("   ").run()
    assert any("Type a sentence" in i.value for i in at.info)
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(tmp_path))
    at = run("beam_explorer.py")
    assert any("No checkpoints found" in e.value for e in at.error)
    (tmp_path / "junk-rnnsearch.pt").write_bytes(b"not a checkpoint")
    at = run("beam_explorer.py")
    errors = [plain(e.value) for e in at.error]
    assert len(errors) == 1 and errors[0].startswith("No checkpoints found in "), errors
    notes = [plain(c.value) for c in at.caption if plain(c.value).startswith("unreadable")]
    assert notes == ["unreadable: junk-rnnsearch.pt is not a valid checkpoint: it is truncated, damaged or not a "
                     "PyTorch file"], notes  # left out, and why, in one plain line




def test_every_session_key_of_the_beam_page_is_listed_in_its_state_module(env: Path) -> None:
    """Issue 49: ui/beam/state.py lists every key of the page (prefixed ``bx_``) on each tab; the keys
    ui/common's helpers derive for it are named here."""
    from tests.state_keys import unlisted
    from ui.beam import state

    assert state.PREFIX == "bx_" and all(k.startswith(state.PREFIX) for k in state.KEYS)
    for tab, shown in (("Search tree", {"bx_pruned", "bx_layout", "bx_dl_tree_0"}),
                       ("Beam per step", {"bx_step", "bx_dl_step_0"}),
                       ("N-best and α", {"bx_hyp", "bx_dl_nbest_0"}),
                       ("Length normalisation", {"bx_dl_norm_0"})):
        at = run("beam_explorer.py", bx_tab=tab, bx_step="1")
        assert unlisted(at, state.KEYS) == [], tab
        assert {"bx_model", "bx_beam", "bx_norm", "bx_text", "bx_tab", *shown} <= set(at.session_state.keys()), tab


# ----------------------------------------------------------------------------------------------
# Alignment browser
# ----------------------------------------------------------------------------------------------


def test_alignment_page_lists_a_split_and_shows_a_pair(env: Path) -> None:
    at = run("alignment_browser.py")
    assert at.selectbox(key="al_split").value == "multi30k/test_2016_flickr"
    table = at.dataframe[0].value
    assert len(table) == 20
    assert {"BLEU", "chrF", "α entropy", "max α", "ref log p", "src words"} <= set(table.columns)
    assert table["α entropy"].notna().all() and table["BLEU"].between(0, 100).all()
    assert "**Source**" in markdown(at)
    assert len(charts(at)) == 2  # own translation and forced reference
    assert downloads(at) == ["Table CSV", "PNG", "SVG", "JSON", "PNG", "SVG", "JSON"]
    assert_all_bound(at, "al_")


def test_alignment_filters_and_url_pick(env: Path) -> None:
    at = run("alignment_browser.py", al_q="dog", al_pick="2")
    table = at.dataframe[0].value
    assert len(table) >= 1
    assert all("dog" in (s + r).lower() for s, r in zip(table["source"], table["reference"]))
    at = run("alignment_browser.py", al_n="3", al_pick="2")  # 3 is not a choice: the default 50
    assert len(at.dataframe[0].value) == 20 and at.select_slider(key="al_n").value == 50
    assert at.selectbox(key="al_pick").value == 2
    at.select_slider(key="al_n").set_value(10).run()
    assert not at.exception and len(at.dataframe[0].value) == 10
    assert at.selectbox(key="al_pick").value == 2
    at.slider(key="al_len").set_range(1, 6).run()
    assert not at.exception
    assert (at.dataframe[0].value["src words"] <= 7).all()  # 6 words (+ Moses splitting of the full stop)


def test_alignment_pick_does_not_leak_into_another_split(env: Path) -> None:
    at = run("alignment_browser.py", al_pick="2")
    assert at.selectbox(key="al_pick").value == 2
    at.selectbox(key="al_split").set_value(GOLD).run()
    assert not at.exception and at.selectbox(key="al_pick").value == 0  # pair 2 of the other split means nothing
    assert list(at.dataframe[0].value.columns[:4]) == ["#", "BLEU", "chrF", "AER"]  # scores before the texts


def test_alignment_second_visit_and_aer_decode_nothing(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = run("alignment_browser.py", al_split=GOLD)
    first.button(key="al_aer").click().run()
    table, aer = first.dataframe[0].value, {m.label: m.value for m in first.metric}

    def boom(*_: Any, **__: Any) -> None:
        raise AssertionError("decoded again")

    monkeypatch.setattr("ui.common.widgets.decode_now", boom)
    again = run("alignment_browser.py", al_split=GOLD)  # another visitor: every row comes from the shared store
    assert again.dataframe[0].value.equals(table)
    again.button(key="al_aer").click().run()
    assert not again.exception and {m.label: m.value for m in again.metric} == aer


def test_alignment_gold_set_overlays_links_and_scores_aer(env: Path, tiny_ckpt: Path) -> None:
    at = run("alignment_browser.py", al_split=GOLD)
    table = at.dataframe[0].value
    assert "AER" in table.columns and len(table) == 3
    assert at.toggle(key="al_gold").value and at.toggle(key="al_argmax").value
    assert any("Squares: gold Sure links" in c.value for c in at.caption)
    at.button(key="al_aer").click().run()
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert {"AER", "precision", "recall"} <= set(metrics) and metrics["sentences"] == "3"
    # The page's cached pipeline agrees with nmt's own forced decoding and AER on the same set.
    gold = env / GOLD.rsplit("/", 1)[0]
    src, ref = [(gold / f"test.{lang}").read_text(encoding="utf-8").splitlines() for lang in ("en", "fr")]
    traces = decoding.forced(checkpoint.load(tiny_ckpt), src, ref, pretokenized=True)
    want = alignment_error([argmax_links(t) for t in traces], read_links(gold / "test.en-fr.sure"),
                           read_links(gold / "test.en-fr.possible"))
    assert float(metrics["AER"]) == pytest.approx(want["aer"], abs=5e-4)
    assert {"AER JSON", "Links CSV"} <= set(downloads(at))
    # The tiny model was trained on captions, not parliament: the AER comes with an out-of-domain note.
    assert any("Out of domain" in plain(w.value) and "tiny" in plain(w.value) for w in at.warning)


def test_alignment_pasted_pairs_and_bad_uploads(env: Path) -> None:
    at = run("alignment_browser.py", al_from="my own pairs")
    at.text_area(key="al_paste").input("A dog runs.\tUn chien court.\nno tab on this line").run()
    assert any("Line 2" in plain(e.value) and "no tab" in plain(e.value) for e in at.error)
    at.text_area(key="al_paste").input("A dog runs.\tUn chien court.\nA man is riding a bike.\tUn homme fait du vélo.")
    at.run()
    assert not at.error and len(at.dataframe[0].value) == 2

    at = run("alignment_browser.py", al_from="my own pairs", al_upload="TSV file")
    at.file_uploader(key="al_file_tsv").set_value(("pairs.tsv", "A café.\tUn café.\n".encode("latin-1"), "text/plain"))
    at.run()
    assert any("pairs.tsv is not UTF-8" in plain(e.value) for e in at.error)
    # A file name is user text: Markdown in it is shown literally (escaped), never rendered.
    name = "`x` **b** ![i](http://h/i.png).tsv"
    at.file_uploader(key="al_file_tsv").set_value((name, "é\tè\n".encode("latin-1"), "text/plain"))
    at.run()
    shown = [e.value for e in at.error]
    assert len(shown) == 1 and plain(shown[0]).startswith(name + " is not UTF-8"), shown
    assert "\\*\\*b\\*\\*" in shown[0] and "![i](" not in shown[0] and "`x`" not in shown[0]

    at = run("alignment_browser.py", al_from="my own pairs", al_upload="two files")
    at.file_uploader(key="al_file_src").set_value(("src.en", b"a\nb\nc\n", "text/plain"))
    at.file_uploader(key="al_file_ref").set_value(("ref.fr", b"x\ny\n", "text/plain"))
    at.run()
    assert any("src.en has 3 lines but ref.fr has 2" in plain(e.value) for e in at.error)


def test_alignment_page_with_rnnencdec_and_a_bad_data_dir(env: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    at = run("alignment_browser.py", al_model="tiny-en-fr-rnnencdec.pt", al_split=GOLD, al_aer="true")
    assert any("fixed summary c" in i.value for i in at.info)
    assert not any("no alignment to score" in i.value for i in at.info)  # the URL starts no corpus-wide work
    at.button(key="al_aer").click().run()
    assert any("no alignment to score" in i.value for i in at.info)
    assert at.dataframe[0].value["α entropy"].isna().all()
    assert len(charts(at)) == 2  # the honest fixed-summary pictures
    monkeypatch.setenv("RNNSEARCH_DATA", str(tmp_path / "nowhere"))
    monkeypatch.setattr(corpora, "BUILTIN_DIR", "no-built-in-sets")  # nothing anywhere (an en–de model, say)
    at = run("alignment_browser.py")
    assert any("No en–fr parallel files" in w.value for w in at.warning)


# ----------------------------------------------------------------------------------------------
# Bottleneck side by side
# ----------------------------------------------------------------------------------------------


def test_bottleneck_page_compares_three_models(env: Path) -> None:
    at = run("bottleneck_compare.py")
    text = markdown(at)
    assert "#### RNNsearch" in text and "#### RNNencdec" in text and "#### RNNsearch, c_i frozen" in text
    assert len(charts(at)) == 3
    assert sum("No α exists here" in c.value for c in at.caption) == 2  # RNNencdec and the ablation
    assert [m.value for m in at.metric if m.label == "log p(reference)"] == ["—"] * 3
    assert_all_bound(at, "bn_")


def test_bottleneck_says_the_fixed_context_once_and_keeps_the_sidebar_short(env: Path) -> None:
    at = run("bottleneck_compare.py")
    specs = [json.loads(c.proto.spec) for c in charts(at)]
    fixed = [sp for sp in specs if [lay["mark"]["type"] for lay in sp.get("layer", [])] == ["rect", "text"]]
    assert len(fixed) == 2  # RNNencdec and the ablation: one band each, not a bar per word
    assert all(sp["layer"][1]["encoding"]["text"]["value"].count("same summary c") == 1 for sp in fixed)
    caption = at.sidebar.caption[-1].value
    assert plain(caption).startswith("RNNsearch: tiny-en-fr-rnnsearch.pt · RNNencdec: tiny-en-fr-rnnencdec.pt")
    assert "bleu_lc" not in caption and len(caption) < 200


def test_bottleneck_reference_gives_logp_and_bleu(env: Path) -> None:
    at = run("bottleneck_compare.py", bn_text="A man is riding a bike.", bn_ref="Un homme fait du vélo.")
    logps = [m.value for m in at.metric if m.label == "log p(reference)"]
    assert len(logps) == 3 and all(v != "—" for v in logps)
    summary = at.dataframe[0].value
    assert list(summary["model"]) == ["RNNsearch", "RNNencdec", "RNNsearch, c_i frozen"]
    assert summary["BLEU"].notna().all()
    assert len(charts(at)) == 4  # three columns and the log p bars
    at.toggle(key="bn_ablation").set_value(False).run()
    assert not at.exception and len(at.dataframe[0].value) == 2


def test_bottleneck_length_slider_and_sweep(env: Path) -> None:
    at = run("bottleneck_compare.py", bn_from="corpus by length", bn_len="5")
    first = markdown(at)
    assert "**Source:**" in first
    at.slider(key="bn_len").set_value(9).run()
    assert not at.exception and markdown(at) != first
    assert "Sweep CSV" not in downloads(at)  # the sweep waits for its button
    at.button(key="bn_sweep").click().run()
    assert not at.exception
    sweep = at.dataframe[-1].value
    assert set(sweep["model"]) == {"RNNsearch", "RNNencdec", "RNNsearch, c_i frozen"}
    assert "Sweep CSV" in downloads(at)


def test_bottleneck_group_without_rnnencdec(env: Path, tiny_checkpoint_dir: Path, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(tiny_checkpoint_dir / "tiny-en-fr-rnnsearch.pt", tmp_path / "solo-rnnsearch.pt")
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(tmp_path))
    at = run("bottleneck_compare.py")
    assert any("has no RNNencdec" in i.value for i in at.info)
    assert "#### RNNencdec" not in markdown(at) and "#### RNNsearch, c_i frozen" in markdown(at)


# ----------------------------------------------------------------------------------------------
# Navigation
# ----------------------------------------------------------------------------------------------


def test_app_navigation_runs_the_three_pages(env: Path) -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.run()
    for page, title in (("beam_explorer.py", "Beam search explorer"), ("alignment_browser.py", "Alignment browser"),
                        ("bottleneck_compare.py", "The bottleneck, side by side")):
        at.switch_page(f"pages/{page}").run()
        assert not at.exception, at.exception
        assert [t.value for t in at.title] == [title]


def test_bottleneck_example_sentence_follows_the_model_pair(env: Path, tiny_checkpoint_dir: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """An untouched example sentence switches with the pair (the paper's long sentence for Europarl, the
    Multi30k one otherwise); a sentence the user typed stays."""
    from ui.common.presets import BY_NAME, long_sentence

    for kind in ("rnnsearch", "rnnencdec"):
        shutil.copy(tiny_checkpoint_dir / f"tiny-en-fr-{kind}.pt", tmp_path / f"tiny-en-fr-{kind}.pt")
        shutil.copy(tiny_checkpoint_dir / f"tiny-en-fr-{kind}.pt", tmp_path / f"europarl-en-fr-{kind}-50.pt")
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(tmp_path))
    at = run("bottleneck_compare.py", bn_model="europarl-en-fr-50")
    paper = BY_NAME["Fixed-vector bottleneck"].text
    assert long_sentence("europarl-en-fr-50") == paper and at.text_area(key="bn_text").value == paper
    at.selectbox(key="bn_model").set_value("tiny-en-fr").run()
    assert not at.exception and not at.warning
    assert at.text_area(key="bn_text").value == long_sentence("tiny-en-fr") == BY_NAME["Long sentence"].text
    at.text_area(key="bn_text").set_value("A dog runs.").run()
    at.selectbox(key="bn_model").set_value("europarl-en-fr-50").run()
    assert at.text_area(key="bn_text").value == "A dog runs."
