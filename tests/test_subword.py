"""nmt.text.subword and nmt.text.subword_bpe: pieces made and joined with subword-nmt, grouped into words, and α
merged over them, each against values worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from nmt.text import subword
from nmt.text.subword_bpe import BpeSegmenter, check_codes
from nmt.text.tokenize import Tokenizer

# Two merges (subword-nmt 0.2 codes: a word's last symbol carries "</w>"): "l o" → "lo", "lo w</w>" → "low</w>".
CODES = "#version: 0.2\nl o\nlo w</w>\n"


def test_bpe_pieces_by_hand() -> None:
    """"low" merges whole; in "lower" only "l o" applies: lo@@ w@@ e@@ r."""
    bpe = BpeSegmenter(CODES)
    assert bpe.encode(["low", "lower"]) == ["low", "lo@@", "w@@", "e@@", "r"]
    assert bpe.decode(["low", "lo@@", "w@@", "e@@", "r"]) == ["low", "lower"]
    assert bpe.decode(["lo@@", "w@@"]) == ["low"]  # a dangling separator at the end is dropped (JoeyNMT)


def test_bpe_restricted_to_the_vocabulary_splits_unknown_pieces_back() -> None:
    """JoeyNMT's set_vocab: "lo@@" is not in the vocabulary, so it goes back to "l@@ o@@"."""
    bpe = BpeSegmenter(CODES, vocabulary={"l@@", "o@@", "w@@", "e@@", "r", "low"})
    assert bpe.encode(["low", "lower"]) == ["low", "l@@", "o@@", "w@@", "e@@", "r"]


def test_the_tokenizer_splits_into_pieces_and_joins_them_before_detokenising() -> None:
    tok = Tokenizer("en", lowercase=True, split="moses", subword=BpeSegmenter(CODES))
    assert tok.tokenize("Low, lower.") == ["low", ",", "lo@@", "w@@", "e@@", "r", "."]
    assert tok.detokenize(["low", ",", "lo@@", "w@@", "e@@", "r", "."]) == "low, lower."


def test_the_record_dispatches_on_its_kind() -> None:
    vocab = ["<pad>", "<unk>", "<s>", "</s>", "l@@", "o@@", "w@@", "e@@", "r", "low"]
    seg = subword.segmenter({"kind": "bpe", "codes": CODES, "separator": "@@", "restrict_to_vocabulary": True}, vocab)
    assert seg is not None and seg.encode(["lower"]) == ["l@@", "o@@", "w@@", "e@@", "r"]
    assert subword.segmenter(None, vocab) is None
    with pytest.raises(ValueError, match="subword kind 'wordpiece'"):
        subword.segmenter({"kind": "wordpiece"}, vocab)


@pytest.mark.parametrize("codes", ["", "#version: 0.2\nl o x\n", "#version: zwei\nl o\n", "#version: 0.2\nlo\n"])
def test_bad_codes_are_a_value_error_not_an_exit(codes: str) -> None:
    with pytest.raises(ValueError):
        check_codes(codes)
    with pytest.raises(ValueError):
        BpeSegmenter(codes)


def test_word_spans_for_both_conventions() -> None:
    bpe = ["a", "vél@@", "os", "</s>"]
    sp = ["▁a", "▁vél", "os", "</s>"]
    assert subword.word_spans(bpe, "bpe") == [(0, 1), (1, 3), (3, 4)]
    assert subword.word_spans(sp, "sentencepiece") == [(0, 1), (1, 3), (3, 4)]
    assert subword.word_labels(bpe, [(0, 1), (1, 3), (3, 4)], "bpe") == ["a", "vélos", "</s>"]
    assert subword.word_labels(sp, [(0, 1), (1, 3), (3, 4)], "sentencepiece") == ["a", "vélos", "</s>"]
    assert subword.word_spans(["x@@", "y@@"], "bpe") == [(0, 2)]  # a dangling piece still belongs to a word
    assert subword.word_spans(["os", "▁a"], "sentencepiece") == [(0, 1), (1, 2)]  # no mark at the start


def test_alpha_summed_over_source_pieces_and_averaged_over_target_pieces() -> None:
    alpha = np.array([[0.1, 0.2, 0.3, 0.4],
                      [0.5, 0.25, 0.25, 0.0],
                      [0.0, 0.6, 0.2, 0.2]])
    cols = subword.sum_columns(alpha, [(0, 1), (1, 3), (3, 4)])
    np.testing.assert_allclose(cols, [[0.1, 0.5, 0.4], [0.5, 0.5, 0.0], [0.0, 0.8, 0.2]])
    both = subword.average_rows(cols, [(0, 2), (2, 3)])  # target "le@@ s" then "vélos"
    np.testing.assert_allclose(both, [[0.3, 0.5, 0.2], [0.0, 0.8, 0.2]])
    np.testing.assert_allclose(both.sum(axis=1), [1.0, 1.0])  # rows stay distributions


def test_word_level_scores_compare_words_not_pieces() -> None:
    from ui.figures.alignment import scoring_text

    tok = Tokenizer("en", lowercase=True, subword=BpeSegmenter(CODES))
    assert tok.words("Lower.") == ["lower", "."] and tok.tokenize("Lower.") == ["lo@@", "w@@", "e@@", "r", "."]
    assert scoring_text("Lower.", "lower .", True, tok) == ("lower .", "lower .")
