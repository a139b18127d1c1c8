"""Glue shared by two or more pages: the model catalogue, widgets, caches and jobs, the frame."""
