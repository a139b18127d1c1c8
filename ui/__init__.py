"""Streamlit-side helpers of the app: checkpoint catalogue, view state, presets and plot builders."""
