"""The shipped everyday model (issue 34) is the file that was handed over, and it still writes what its
results file recorded: a seeded sample of the built-in Tatoeba test, greedy and beam 5, word for word."""

from __future__ import annotations

import json

import pytest

from nmt.decoding.search import translate
from nmt.models import checkpoint
from nmt.text.data import files_sha256, read_parallel
from scripts import everyday_results as E
from tests.conftest import ROOT

CKPT = ROOT / "checkpoints" / "europarl-tatoeba-en-fr-rnnsearch-30k.pt"
RESULTS = ROOT / "checkpoints" / "europarl-tatoeba-en-fr.results.json"
pytestmark = pytest.mark.skipif(not CKPT.exists(), reason="the everyday model is not shipped")

README = """A model (39.3 MB, sha256 `{sha}`) trained on one lent NVIDIA {gpu}, from scratch. Training data
sha256 `3800fb38…`. 3,142 updates (exported: the best, update 3,000)."""


@pytest.fixture(scope="module")
def results() -> dict:
    return json.loads(RESULTS.read_text(encoding="utf-8"))


def test_the_shipped_file_is_the_one_handed_over(results: dict) -> None:
    """Its SHA-256 and metadata are what was checked against the README beside it on arrival."""
    p = results["provenance"]
    assert files_sha256([CKPT]) == p["file_sha256"] == (
        "24b03105fcf1b6aa9e81dbf6f7d56e06667f318c2d9bbe5361635b280736279a")
    meta = checkpoint.read_checkpoint(CKPT)["meta"]
    assert (meta["device"], meta["updates"], meta["train_data"]["sha256"]) == (
        "NVIDIA H200", 3000, "3800fb38cb4e1e544562a7f94be1f370772965d84d6ec5741c5e3ac35180ab96")
    assert [s["updates"] for s in meta["segments"]] == [[0, 3000]] and meta["segments"][0]["from"] is None


def test_the_check_refuses_a_file_its_readme_does_not_describe() -> None:
    sha = files_sha256([CKPT])
    assert E.check(CKPT, README.format(sha=sha, gpu="H200"))["updates"] == 3000
    with pytest.raises(E.Refused, match="its SHA-256"):
        E.check(CKPT, README.format(sha="0" * 64, gpu="H200"))
    with pytest.raises(E.Refused, match=r"does not match its README: device$"):
        E.check(CKPT, README.format(sha=sha, gpu="H100"))
    with pytest.raises(E.Refused, match=r"updates, segments$"):
        E.check(CKPT, README.format(sha=sha, gpu="H200").replace("update 3,000", "update 2,000")
                .replace("from scratch", "from a checkpoint"))


def test_it_writes_what_its_results_file_recorded_on_a_seeded_sample(results: dict) -> None:
    s = results["sample"]
    src, _ = read_parallel(ROOT / s["data"], s["split"], "en", "fr")
    assert len(s["rows"]) == E.SAMPLE_SIZE and s["seed"] == E.SAMPLE_SEED
    sources = [src[k] for k in s["rows"]]
    lm = checkpoint.load(CKPT)
    assert translate(lm, sources) == s["greedy"]
    assert translate(lm, sources, beam=5) == s["beam5"]


def test_its_scores_meet_the_issue_bars(results: dict) -> None:
    """Beam 5 on the Tatoeba test: ≥ 45 BLEU with dictionary replacement, `<unk>` in ≤ 8 % of lines without."""
    rows = json.loads((ROOT / "bench" / "unk-dictionary.json").read_text())
    row = next(r for r in rows if r["checkpoint"] == CKPT.name and r["data"] == "tatoeba-fr-en"
               and r["split"] == "test" and r["decoding"] == "beam5")
    assert row["dictionary"]["bleu"] >= 45 and row["lines_with_unk"] <= 0.08 * row["sentences"]
    m = next(iter(results["models"].values()))
    assert m["tests_beam5"]["tatoeba-fr-en/test"]["all"]["score"] == row["kept"]["bleu"]  # one decode, two tools
