"""Decoding: traces, greedy/beam/forced search, the stepper, ensembles, fusion, α surgery.

Its modules import from ``nmt.text``, ``nmt.models`` and from this package, never from a layer above
(tests/test_layout.py checks it).
"""
