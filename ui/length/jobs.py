"""Length vs quality's model work: a checkpoint scored on a held-out split (:func:`nmt.tools.experiment.score_test_set`,
BLEU by source length with bootstrap intervals), once per server and settings in one of the server's heavy-job slots,
and the held-out splits offered for it.
"""

from __future__ import annotations

from typing import Any

from nmt.text.corpora import Split, by_label
from nmt.text.data import read_parallel
from nmt.tools.experiment import score_test_set
from ui.common import heavy, models
from ui.common import widgets as W

__all__ = ["Split", "by_label", "recompute", "test_sets"]


def recompute(ck: models.CheckpointInfo, split: Split, limit: int, beam: int, bar: Any,
              toolkit_rules: bool = True) -> dict[str, Any]:
    """Scores of one checkpoint on one split, computed once per server and settings (progress on ``bar``):
    one run at a time (a second visitor waits for its result), in one of the server's heavy-job slots. An imported
    model decodes by its toolkit's search rules unless ``toolkit_rules`` is False."""
    key = (str(ck.path), ck.mtime, str(split.directory), split.name, limit, beam, toolkit_rules)

    def compute() -> dict[str, Any]:
        lm = models.load(ck)
        src, ref = read_parallel(split.directory, split.name, lm.src_tok.lang, lm.tgt_tok.lang, limit or None)
        return score_test_set(lm, src, ref, beam=beam, n_bootstrap=200, toolkit_rules=toolkit_rules,
                              progress=lambda f: bar.progress(f, text=f"Translating {split.label}… {f:.0%}"))

    return heavy.memo(W.shared_store("recomputed_scores"), heavy.FLIGHT, key,
                      lambda: W.in_slot(lambda text: bar.progress(0.0, text=text), compute),
                      lambda: bar.progress(0.0, text=f"Translating {split.label}: {W.WAITING}"))


def test_sets(lm_langs: tuple[str, str]) -> list[Split]:
    """Held-out splits (not training data, not pre-tokenised gold sets) in the configured data folders."""
    return [s for s in W.corpus_splits(*lm_langs) if not s.gold and not s.name.startswith("train")]
