"""Training: the training run, resuming, segments, sampled softmax, timelines.

Its modules import from ``nmt.text``, ``nmt.models``, ``nmt.decoding``, ``nmt.explanation`` and from this
package, never from a layer above (tests/test_layout.py checks it).
"""
