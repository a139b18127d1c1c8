"""RNNsearch / RNNencdec (Bahdanau, Cho & Bengio, ICLR 2015) with one decoding core.

Sub-packages by role, each importing only from those listed before it (tests/test_layout.py):

* :mod:`nmt.text`        – vocabularies, Moses tokenisation and truecasing, corpora, BLEU / chrF,
  bilingual dictionaries
* :mod:`nmt.models`      – the RNNsearch model of Appendix A.2 (:mod:`nmt.models.rnnsearch`), Luong's
  models, the written contract (:mod:`nmt.models.contract`), descriptions, safe checkpoints
* :mod:`nmt.decoding`    – greedy, beam and forced decoding and the stepper, all returning
  :class:`nmt.decoding.trace.DecodeTrace`; ensembles, language-model fusion, α surgery
* :mod:`nmt.explanation` – attributions, contrastive explanations, alignments and their error rate,
  faithfulness tests, coverage
* :mod:`nmt.training`    – the training run, resuming, segments, sampled softmax, timelines
* :mod:`nmt.tools`       – ``python -m nmt SUBCOMMAND``: one module per subcommand, and model importers

The flat modules left here (``nmt/translate.py`` and the like) only forward the old
``python -m nmt.NAME`` commands to ``python -m nmt NAME`` for one release.
"""

__version__ = "0.1.0"
