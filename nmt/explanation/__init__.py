"""Explanation: attributions, contrastive explanations, alignments, faithfulness, coverage.

Its modules import from ``nmt.text``, ``nmt.models``, ``nmt.decoding`` and from this package, never from a
layer above (tests/test_layout.py checks it).
"""
