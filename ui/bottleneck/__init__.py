"""Bottleneck side by side (pages/bottleneck_compare.py); its shared views are ui.figures."""
