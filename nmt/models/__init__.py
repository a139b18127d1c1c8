"""Models: the RNNsearch and Luong networks, their states and contract, descriptions, checkpoints.

Its modules import from ``nmt.text`` and from this package, never from a layer above (tests/test_layout.py
checks it).
"""
