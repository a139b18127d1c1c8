"""The alignment browser (pages/alignment_browser.py): both directions, uploads."""
