"""The built-in evaluation sets (``evalsets/``): always a data root, so a fresh clone has splits.

Expected labels and sizes below were counted by hand from the files (``zcat F | wc -l``, and
``wc -w`` of the link files) and agree with the published Hansards counts (test: 4,038 Sure links,
17,438 Possible; trial: 338 and 1,784) and the shared corpus README.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from nmt.explanation.align import read_links
from nmt.explanation.faithfulness import aer_by_method
from nmt.models.checkpoint import LoadedModel
from nmt.text import corpora
from nmt.text.corpora import DataRoot
from nmt.text.data import read_lines, read_parallel
from nmt.tools import align as align_tool
from tests.page_app import app_at

ROOT = Path(__file__).resolve().parent.parent
EVALSETS = ROOT / "evalsets"
HANSARDS = "alignment/hansards-naacl2003-en-fr"
BUILTIN_EN_FR = {  # label: (sentence pairs, gold Sure/Possible links)
    f"{HANSARDS}/test": (447, True),
    f"{HANSARDS}/trial": (37, True),
    "europarl-v7-fr-en/test2000q4": (3000, False),
    "multi30k/test_2016_flickr": (1000, False),
    "multi30k/test_2017_flickr": (1000, False),
    "multi30k/test_2017_mscoco": (461, False),
    "tatoeba-fr-en/test": (1000, False),
    "wmt/newstest2014-fren": (3003, False),
}
GOLD_LINKS = {"test": (4038, 17438), "trial": (338, 1784)}  # (Sure, Possible) over the whole set
HELD_OUT = [label for label, (_, gold) in BUILTIN_EN_FR.items() if not gold]
TIMEOUT = 120


def pair(d: Path, name: str, en: list[str], fr: list[str], gz: bool = False) -> None:
    """``d/name.{en,fr}`` (gzipped with ``gz``) holding the given lines."""
    d.mkdir(parents=True, exist_ok=True)
    for lang, lines in (("en", en), ("fr", fr)):
        text = "".join(f"{s}\n" for s in lines).encode()
        (d / f"{name}.{lang}{'.gz' if gz else ''}").write_bytes(gzip.compress(text) if gz else text)


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A project folder as a fresh clone has it: ``evalsets/``, no ``data/``, no allow-list file."""
    project = tmp_path / "clone"
    shutil.copytree(EVALSETS, project / "evalsets")
    return project


def test_a_fresh_clone_lists_exactly_the_builtin_sets(clone: Path) -> None:
    roots = corpora.configured_roots({}, clone / "configs" / "data_roots.toml", project=clone)
    assert roots == [DataRoot("data", clone / "data"), DataRoot("built-in", clone / "evalsets")]
    assert not (clone / "data").exists()
    splits = corpora.find_splits(roots, "en", "fr")
    assert [s.label for s in splits] == list(BUILTIN_EN_FR)  # gold sets first, then by label
    for s in splits:
        n, gold = BUILTIN_EN_FR[s.label]
        assert (s.gold, s.root) == (gold, "built-in"), s.label
        src, ref = read_parallel(s.directory, s.name, "en", "fr")
        assert len(src) == len(ref) == n, s.label
    assert corpora.find_splits(roots, "en", "de") == []  # no German here: the pages say so


def test_the_projects_own_roots_end_with_the_builtin_sets() -> None:
    """With nothing in the environment, the real project's roots: data/, the allow-list, then evalsets/."""
    roots = corpora.configured_roots({})
    assert roots[0] == DataRoot("data", (ROOT / "data").resolve())  # CI links data/ to ../shared/data
    assert roots[-1] == DataRoot("built-in", EVALSETS)
    builtin = corpora.find_splits(roots[-1:], "en", "fr")
    assert {s.label: (s.gold, s.root) for s in builtin} == {
        label: (gold, "built-in") for label, (_, gold) in BUILTIN_EN_FR.items()}


@pytest.mark.parametrize("name", sorted(GOLD_LINKS))
def test_builtin_gold_links_are_read_from_their_gzipped_files(clone: Path, name: str) -> None:
    split = corpora.by_label(corpora.find_splits(corpora.configured_roots({}, clone / "none.toml", project=clone),
                                                 "en", "fr"), f"{HANSARDS}/{name}")
    assert split is not None and split.gold
    sure_file, possible_file = corpora.gold_files(split, "en", "fr")
    assert (sure_file.name, possible_file.name) == (f"{name}.en-fr.sure.gz", f"{name}.en-fr.possible.gz")
    sure, possible = read_links(sure_file), read_links(possible_file)
    n = BUILTIN_EN_FR[f"{HANSARDS}/{name}"][0]
    assert len(sure) == len(possible) == n
    assert (sum(map(len, sure)), sum(map(len, possible))) == GOLD_LINKS[name]
    assert all(s <= p for s, p in zip(sure, possible, strict=True))  # S ⊆ P, as AER needs


def test_a_configured_split_wins_over_the_builtin_one_of_the_same_label(tmp_path: Path) -> None:
    """data/ and the built-in root share bare labels: data/'s copy is listed, once; the allow-list's
    roots keep their prefix, so their copy is a split of its own."""
    builtin, data, shared = tmp_path / "evalsets", tmp_path / "data", tmp_path / "shared"
    pair(builtin / "multi30k", "test_2016_flickr", ["built-in"] * 3, ["intégré"] * 3, gz=True)
    pair(builtin / "wmt", "newstest2014-fren", ["news"], ["nouvelles"], gz=True)
    pair(data / "multi30k", "test_2016_flickr", ["mine", "too"], ["à moi", "aussi"])
    pair(data / "mine", "val", ["a"], ["b"])
    pair(shared / "multi30k", "test_2016_flickr", ["shared"], ["partagé"])
    config = tmp_path / "roots.toml"
    config.write_text('[[root]]\nname = "shared"\npath = "shared"\n', encoding="utf-8")
    splits = corpora.find_splits(corpora.configured_roots({}, config, project=tmp_path), "en", "fr")
    assert [(s.label, s.root) for s in splits] == [
        ("mine/val", "data"), ("multi30k/test_2016_flickr", "data"),
        ("shared:multi30k/test_2016_flickr", "shared"), ("wmt/newstest2014-fren", "built-in")]
    m30k = corpora.by_label(splits, "multi30k/test_2016_flickr")
    assert m30k is not None and read_parallel(m30k.directory, m30k.name, "en", "fr") == (
        ["mine", "too"], ["à moi", "aussi"])
    config.write_text('[[root]]\nname = "built-in"\npath = "shared"\n', encoding="utf-8")
    with pytest.raises(ValueError, match="reserved"):
        corpora.configured_roots({}, config, project=tmp_path)


def test_links_out_of_the_builtin_root_are_not_followed(tmp_path: Path) -> None:
    """A folder, a split or a link file that leads out of evalsets/ through a symbolic link is not
    offered, nor is a split whose plain file (opened before its .gz) does so."""
    builtin, outside = tmp_path / "evalsets", tmp_path / "secret"
    pair(builtin / "multi30k", "test_2016_flickr", ["inside"], ["dedans"], gz=True)
    pair(outside, "passwords", ["hunter2"], ["hunter2"])
    (builtin / "escape").symlink_to(outside, target_is_directory=True)
    for lang in ("en", "fr"):
        (builtin / "multi30k" / f"leak.{lang}").symlink_to(outside / f"passwords.{lang}")
    pair(builtin / "wmt", "shadowed", ["x"], ["y"], gz=True)
    (builtin / "wmt" / "shadowed.en").symlink_to(outside / "passwords.en")  # read before shadowed.en.gz
    gold = builtin / "alignment" / "g"
    pair(gold, "test", ["a"], ["b"], gz=True)
    (gold / "test.en-fr.sure.gz").write_bytes(gzip.compress(b"0-0\n"))
    (gold / "test.en-fr.possible").symlink_to(outside / "passwords.en")  # opened before any .gz
    roots = corpora.configured_roots({}, tmp_path / "none.toml", project=tmp_path)
    splits = corpora.find_splits(roots, "en", "fr")
    assert [(s.label, s.gold) for s in splits] == [("alignment/g/test", False), ("multi30k/test_2016_flickr", False)]
    for label in ("escape/passwords", "multi30k/leak", "wmt/shadowed", "../secret/passwords", str(outside)):
        assert corpora.by_label(splits, label) is None


def test_align_cli_scores_the_gzipped_builtin_trial_set(tiny_ckpt: Path, tmp_path: Path) -> None:
    """``nmt.explanation.align --aer evalsets/…/trial`` reads the .gz text and links, and gives what the same
    set as plain files gives."""
    plain = tmp_path / "plain"
    plain.mkdir()
    for f in (EVALSETS / HANSARDS).glob("trial.*.gz"):
        (plain / f.stem).write_bytes(gzip.decompress(f.read_bytes()))
    results = []
    for prefix in (EVALSETS / HANSARDS / "trial", plain / "trial"):
        out = tmp_path / f"{prefix.parent.name}.json"
        assert align_tool.main(["--checkpoint", str(tiny_ckpt), "--aer", str(prefix), "--json", str(out)]) == 0
        results.append({k: v for k, v in json.loads(out.read_text()).items() if k != "gold"})
    assert results[0]["sentences"] == 37 and results[0]["links_sure"] == 338
    assert results[0] == results[1]


def test_faithfulness_aer_reads_the_gzipped_builtin_gold_set(tiny_lm: LoadedModel) -> None:
    """``nmt.explanation.faithfulness --aer`` on the built-in trial set: its first two pairs, 14 + 3 Sure links."""
    res = aer_by_method(tiny_lm, EVALSETS / HANSARDS / "trial", limit=2, ig_steps=2, progress=False)
    assert res["sentences"] == 2
    assert {m["links_sure"] for m in res.values() if isinstance(m, dict)} == {17}  # first 2 lines: 14 + 3


@pytest.fixture
def empty_data(tiny_checkpoint_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The tiny models, $RNNSEARCH_DATA at an empty folder, the committed (empty) allow-list."""
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(tiny_checkpoint_dir))
    monkeypatch.setenv("RNNSEARCH_DATA", str(tmp_path / "empty"))
    (tmp_path / "empty").mkdir()
    return tmp_path / "empty"


def run_page(page: str, **params: str) -> AppTest:
    """Run a page once with URL query parameters; no exception, no warning, no error."""
    at = app_at(f"pages/{page}", TIMEOUT)
    at.query_params.update(params)
    at.run()
    assert not at.exception and not at.warning and not at.error, (at.exception, at.warning, at.error)
    return at


def test_corpus_pickers_offer_the_builtin_sets_with_no_data_folder(empty_data: Path) -> None:
    at = run_page("alignment_browser.py", al_n="10")
    assert list(at.selectbox(key="al_split").options) == list(BUILTIN_EN_FR)
    assert at.selectbox(key="al_split").value == "multi30k/test_2016_flickr"
    assert any("Built-in: shipped in evalsets/" in c.value for c in at.caption)
    at = run_page("alignment_browser.py", al_n="10", al_split=f"{HANSARDS}/trial")
    at.button(key="al_aer").click().run()
    assert not at.exception and [m.value for m in at.metric if m.label == "sentences"] == ["37"]
    at = run_page("bottleneck_compare.py", bn_from="corpus by length", bn_len="12")
    assert list(at.sidebar.selectbox(key="bn_split").options) == list(BUILTIN_EN_FR)
    assert any("Sentence #" in c.value for c in at.caption)  # a corpus sentence of the chosen length
    at = run_page("length_quality.py")
    assert list(at.selectbox(key="lq_rtest").options) == HELD_OUT
    assert at.selectbox(key="lq_rtest").value == "multi30k/test_2016_flickr"


@pytest.mark.corpus
def test_builtin_files_are_the_shared_sets_or_their_stated_head(real_data: Path) -> None:
    """Each built-in file is a byte copy of the shared one, a gzip of the shared plain file, or (Europarl)
    the first 3,000 lines of the shared file, as evalsets/README.md says."""
    for f in sorted(EVALSETS.rglob("*.gz")):
        rel = f.relative_to(EVALSETS)
        source = real_data / rel
        if rel.parts[0] == "europarl-v7-fr-en":
            assert read_lines(f) == read_lines(source, limit=3000), rel
        elif source.exists():
            assert f.read_bytes() == source.read_bytes(), rel
        else:
            assert gzip.decompress(f.read_bytes()) == source.with_suffix("").read_bytes(), rel
