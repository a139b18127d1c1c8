"""The beam search explorer (pages/beam_explorer.py) and its pure views."""
