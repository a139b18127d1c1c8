"""Compare attention (pages/compare_attention.py); its shared views are ui.figures."""
