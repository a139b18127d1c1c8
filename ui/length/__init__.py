"""Length vs quality (pages/length_quality.py); its shared views are ui.figures."""
