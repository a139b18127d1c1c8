"""Text: vocabularies, tokenisation, truecasing, subword pieces, corpora, parallel data, metrics, dictionaries.

The lowest layer: its modules import from no other sub-package of nmt (tests/test_layout.py checks it).
"""
