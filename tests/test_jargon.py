"""Jargon spelled out where it is shown (issue 21): a checkpoint's scores in the stepper's model
picker read "BLEU 51.8 with greedy decoding … on the validation set", not "val greedy 51.8"."""

from __future__ import annotations

from ui.common import models

EXPORTED = {"val": {"greedy": {"bleu": {"score": 51.84, "signature": "s"}, "sentences": 1014},
                    "beam5": {"bleu": {"score": 53.26}}},
            "test": {"greedy": {"bleu": {"score": 54.0}}}}  # nmt.tools.export's shape


def test_scores_in_words() -> None:
    assert models.score_phrase(EXPORTED) == ("BLEU 51.8 with greedy decoding, 53.3 with beam search, k = 5, "
                                             "on the validation set")
    assert models.score_phrase({"test": {"greedy": {"bleu": {"score": 54.0}}}}) == \
        "BLEU 54.0 with greedy decoding, on the test set"
    # other shapes keep the short form they had
    assert models.score_phrase({"test2016": {"bleu": 35.123}}) == "test2016 BLEU 35.1"
    assert models.score_phrase(None) == ""
