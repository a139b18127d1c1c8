"""nmt.models.provenance: the one line saying where a checkpoint came from, against lines written by hand."""

from __future__ import annotations

from pathlib import Path

from nmt.models import provenance
from nmt.tools.importers import joeynmt

FIX = Path(__file__).parent / "fixtures" / "joeynmt" / "model"


def test_an_imported_bpe_model_names_toolkit_version_level_case_and_its_checkpoint_digest() -> None:
    meta = {"imported": {"toolkit": "joeynmt", "version": "2.3.0", "checkpoint": "best.ckpt",
                         "files_sha256": {"best.ckpt": "0123456789abcdef" * 4, "config.yaml": "ff" * 32}},
            "tokenisation": {"level": "bpe", "lowercase": True, "split": "moses",
                             "subword": {"kind": "bpe", "codes": "#version: 0.2\n", "separator": "@@"}}}
    assert provenance.origin(meta) == "Imported from JoeyNMT 2.3.0 (bpe, lower-cased) · best.ckpt sha256 0123456789ab"
    assert provenance.subword_kind(meta) == "bpe"


def test_a_word_level_import_without_version_or_digest_says_only_what_it_knows() -> None:
    meta = {"imported": {"toolkit": "opennmt-py", "version": "unstated"},
            "tokenisation": {"level": "word", "lowercase": False}}
    assert provenance.origin(meta) == "Imported from OpenNMT-py (word)"
    assert provenance.subword_kind(meta) is None


def test_an_opennmt_version_with_a_note_shows_only_the_version() -> None:
    """The OpenNMT-py importer records "3.x (OpenNMT-py does not record its version; …)": the sidebar line
    keeps "3.x" and one parenthesis, the tokenisation's."""
    meta = {"imported": {"toolkit": "opennmt-py", "version": "3.x (OpenNMT-py does not record its version; the "
                         "checkpoint has its 3.x layout)", "checkpoint": "model_step_1500.pt",
                         "files_sha256": {"model_step_1500.pt": "9daddfde1f00" + "0" * 52}},
            "tokenisation": {"level": "subword", "lowercase": False, "subword": {"kind": "sentencepiece"}}}
    want = "Imported from OpenNMT-py 3.x (sentencepiece) · model_step_1500.pt sha256 9daddfde1f00"
    assert provenance.origin(meta) == want


def test_the_joeynmt_fixture_as_imported() -> None:
    meta = joeynmt.convert(FIX)["meta"]
    digest = joeynmt.sha256(FIX / "best.ckpt")[:12]  # the file's bytes, hashed here independently of meta
    assert provenance.origin(meta) == f"Imported from JoeyNMT 2.3.0 (word, lower-cased) · best.ckpt sha256 {digest}"


def test_our_own_models_say_what_they_were_trained_on() -> None:
    meta = {"train_data": {"dir": "data/multi30k", "split": "train", "pairs": 29000}, "updates": 2475}
    assert provenance.origin(meta) == "Trained by this project on Multi30k (29,000 pairs), 2,475 updates"
    meta = {"train_data": {"dir": "/x/.gpu-data-tc"}}
    assert provenance.origin(meta) == "Trained by this project on Europarl + Tatoeba"


def test_odd_meta_gives_the_unknown_line_not_an_error() -> None:
    for meta in ({}, {"train_data": "multi30k"}, {"imported": "joeynmt", "updates": True}):
        assert provenance.origin(meta) == provenance.UNKNOWN
    odd = {"imported": {"toolkit": None, "files_sha256": [1], "checkpoint": 3}, "tokenisation": {"subword": "bpe"}}
    assert provenance.origin(odd) == "Imported from another toolkit (word)"


def test_imported_is_what_the_pair_pages_ask_before_adding_the_origin_line() -> None:
    """Pair pages add the origin line only for imported models (their pair caption names our own models' data)."""
    assert provenance.imported({"imported": {"toolkit": "onmt"}}) is True
    assert provenance.imported({"data": "multi30k", "updates": 5}) is False
    assert provenance.imported({"imported": "joeynmt"}) is False  # not a record: treated as ours, never an error
