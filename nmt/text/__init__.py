"""Text: vocabularies, tokenisation, truecasing, corpora, parallel data, metrics, dictionaries.

Its modules import from no other sub-package of nmt and from this package, never from a layer above
(tests/test_layout.py checks it).
"""
