"""Truecasing (issue 20): a sentence-initial capital no longer makes a word unknown, and comes back."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from nmt.models import checkpoint
from nmt.models.rnnsearch import ModelConfig, RNNSearch
from nmt.text.tokenize import Tokenizer
from nmt.text.truecase import Truecaser, detruecase
from nmt.text.vocab import UNK, Vocab

# Tokenised training text: "my" is lower-case mid-sentence, "Tom" always capitalised.
TRAIN = [
    "My brother Tom lives in Paris .".split(),
    "I saw my brother and Tom yesterday .".split(),
    "Where is my book ?".split(),
    "Tom reads my book .".split(),
]


@pytest.fixture()
def tc() -> Truecaser:
    return Truecaser.train(TRAIN)


def test_round_trip_my_brother_tom(tc: Truecaser) -> None:
    tokens = "My brother Tom is here .".split()
    assert tc.truecase(tokens) == "my brother Tom is here .".split()
    assert tc.detruecase(tc.truecase(tokens)) == tokens


def test_learns_from_mid_sentence_words_only(tc: Truecaser) -> None:
    # "My" is only ever seen sentence-initially capitalised: Moses does not count sentence starts.
    assert tc.best["my"] == "my"
    assert tc.best["tom"] == "Tom"
    assert "where" not in tc.best  # seen only at a sentence start: unknown, kept as typed
    assert tc.truecase(["Where", "is", "Tom", "?"]) == ["Where", "is", "Tom", "?"]


def test_second_sentence_start_and_specials(tc: Truecaser) -> None:
    tokens = ["Tom", "reads", ".", "My", "book", "."]
    assert tc.truecase(tokens) == ["Tom", "reads", ".", "my", "book", "."]
    assert detruecase(["my", "book", ".", "my", "brother"]) == ["My", "book", ".", "My", "brother"]
    # The vocabulary's own words are never re-cased, and a factor bar or a tag does not split a token.
    assert detruecase([UNK, "is", "here"]) == [UNK, "is", "here"]
    assert tc.truecase(["My", "a|b", "<b>", "book"]) == ["my", "a|b", "<b>", "book"]


def test_tokenizer_with_truecaser(tc: Truecaser) -> None:
    tok = Tokenizer("en", tc)
    assert tok.tokenize("My brother Tom is here.") == ["my", "brother", "Tom", "is", "here", "."]
    assert tok.detokenize(["my", "brother", "Tom", "is", "here", "."]) == "My brother Tom is here."
    assert Tokenizer("en").tokenize("My brother Tom is here.")[0] == "My"  # no truecaser: as before


def test_restrict_keeps_every_id(tc: Truecaser) -> None:
    vocab = Vocab.build([tc.truecase(s) for s in TRAIN[:2]], 100)
    small = tc.restrict(vocab)
    # Every mid-sentence word of TRAIN whose spelling is in the vocabulary ("book", "reads", "is" are not).
    assert small.best == {"my": "my", "brother": "brother", "tom": "Tom", "lives": "lives", "in": "in",
                          "paris": "Paris", "saw": "saw", "and": "and", "yesterday": "yesterday"}
    for sent in [*TRAIN, "My book , Tom !".split()]:
        assert vocab.encode(small.truecase(sent)) == vocab.encode(tc.truecase(sent))
    assert Truecaser.from_dict(small.to_dict()).best == small.best


def _tiny_model() -> tuple[RNNSearch, Vocab, Vocab]:
    torch.manual_seed(0)
    src, tgt = Vocab.build([["my", "brother", "Tom"]], 50), Vocab.build([["mon", "frère", "Tom"]], 50)
    cfg = ModelConfig(len(src), len(tgt), 8, 8, 8, 8, 0.0, "attention")
    return RNNSearch(cfg), src, tgt


def test_checkpoint_stores_and_restores_truecaser(tc: Truecaser, tmp_path: Path) -> None:
    model, src, tgt = _tiny_model()
    tgt_tc = Truecaser.train([["Je", "vois", "mon", "frère", "Tom", "."]])
    ckpt = checkpoint.make_checkpoint(model, src, tgt, "en", "fr", {}, truecase={"src": tc, "tgt": tgt_tc})
    path = tmp_path / "tc.pt"
    checkpoint.atomic_save(ckpt, path)
    raw = torch.load(path, weights_only=True)  # plain dicts and strings only
    assert "my" in raw["truecase"]["src"]["spellings"].split("\n")  # the compact form: spellings alone
    assert "Tom" in raw["truecase"]["tgt"]["spellings"].split("\n")
    lm = checkpoint.load(path)
    assert lm.src_tok.tokenize("My brother Tom.") == ["my", "brother", "Tom", "."]
    assert lm.tgt_tok.detokenize(["mon", "frère", "Tom", "."]) == "Mon frère Tom."


def test_both_stored_forms_give_the_same_truecaser() -> None:
    best = {"my": "my", "tom": "Tom", "eu": "EU"}
    compact = Truecaser(best).to_dict()
    assert compact == {"spellings": "my\nTom\nEU"}  # by hand
    assert Truecaser.from_dict(compact).best == best
    assert Truecaser.from_dict({"best": best}).best == best  # checkpoints written before the compact form
    odd = {"my": "my", "x": "Y"}  # a key that is not its spelling lower-cased keeps the dict form
    assert Truecaser(odd).to_dict() == {"best": odd}
    with pytest.raises(ValueError):
        Truecaser.from_dict({"spellings": 3})


def test_old_checkpoint_without_truecaser_unchanged(tmp_path: Path) -> None:
    model, src, tgt = _tiny_model()
    path = tmp_path / "old.pt"
    checkpoint.atomic_save(checkpoint.make_checkpoint(model, src, tgt, "en", "fr", {}), path)
    assert "truecase" not in torch.load(path, weights_only=True)
    lm = checkpoint.load(path)
    assert lm.src_tok.truecaser is None and lm.tgt_tok.truecaser is None
    assert lm.src_tok.tokenize("My brother Tom.") == ["My", "brother", "Tom", "."]
    assert lm.tgt_tok.detokenize(["mon", "frère", "."]) == "mon frère."


COUNTED = [s.split() for s in (
    "Apple pie is nice .", "I like Apple pie .", "we eat apple pie .", "They saw Apple .", "Zebra runs .",
    "Zebra runs .", "a zebra runs .", "Where is the cat ?", "the cat saw the dog and THE bird .")]


def test_training_counts_mid_sentence_spellings_by_hand() -> None:
    """Counted by hand, every token but each sentence's first (and the letterless "." and "?"):
    apple: Apple 2 (lines 2, 4), apple 1 (line 3) → Apple, although "Apple" also starts line 1;
    zebra: zebra 1 (line 7) → zebra, although "Zebra" starts two lines; the: the 2 (lines 8, 9),
    THE 1 → the; every other counted word has one spelling. Words seen only sentence-initially
    ("I", "They", "Where", and the lower-case "we", "a") are not learnt at all."""
    want = {w: w for w in ("pie", "is", "nice", "like", "eat", "saw", "runs", "zebra", "the", "cat", "dog", "and",
                           "bird")}
    want["apple"] = "Apple"
    assert Truecaser.train(COUNTED).best == want
    tc = Truecaser(want)
    assert tc.truecase("Zebra saw THE Apple".split()) == "zebra saw the Apple".split()
    assert tc.truecase("We like APPLE pie".split()) == "We like Apple pie".split()  # "we" unknown: as typed


def test_detruecasing_never_misaligns_the_sentence() -> None:
    # Moses would drop an empty token and split one holding a space; then the tokens come back as they are
    assert detruecase(["", "x"]) == ["", "x"]
    assert detruecase(["a b", "c"]) == ["a b", "c"]
    assert detruecase(["a", "b"]) == ["A", "b"]
