"""RNNsearch / RNNencdec (Bahdanau, Cho & Bengio, ICLR 2015) with one decoding core.

Modules, one concept each:

* :mod:`nmt.tokenize`   – sacremoses tokenisation / detokenisation
* :mod:`nmt.vocab`      – word vocabularies with a frequency shortlist
* :mod:`nmt.data`       – corpus reading, length filtering, length-sorted minibatches
* :mod:`nmt.model`      – the model of Appendix A.2 (encoder, alignment model, decoder)
* :mod:`nmt.decoding`   – greedy, beam and forced decoding, and token-by-token stepping,
  all returning :class:`nmt.trace.DecodeTrace` (built from :mod:`nmt.source`, the per-step
  :mod:`nmt.recorder`, :mod:`nmt.beam` and :mod:`nmt.stepper`, re-exported there)
* :mod:`nmt.trace`      – the decode trace every view of the app reads
* :mod:`nmt.checkpoint` – safe checkpoint save / load
* :mod:`nmt.metrics`    – sacrebleu BLEU / chrF, BLEU by length bucket

A large vocabulary (Jean et al. 2015; issue 20):

* :mod:`nmt.truecase`   – Moses truecasing / detruecasing (models stored in checkpoints)
* :mod:`nmt.sampled_softmax` – training with the softmax over each data partition's words
* :mod:`nmt.lexicon`    – a bilingual dictionary from word alignments (eflomal)
* :mod:`nmt.candidates` – per-sentence decoding candidate lists
* :mod:`nmt.unk_replace` – ``<unk>`` replaced from the dictionary, else copied
* :mod:`nmt.quantize`   – int8 storage of embedding and output matrices (per-row scales)
"""

__version__ = "0.1.0"
