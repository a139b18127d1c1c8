"""Tools: one module per subcommand of ``python -m nmt`` and the model importers.

Its modules import from ``nmt.text``, ``nmt.models``, ``nmt.decoding``, ``nmt.explanation``, ``nmt.training``
and from this package, never from a layer above (tests/test_layout.py checks it).
"""
