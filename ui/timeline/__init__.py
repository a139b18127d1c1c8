"""Watch it learn (pages/watch_it_learn.py) and its pure views."""
