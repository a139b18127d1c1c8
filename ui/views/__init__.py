"""Pure builders of every page: data in, figures, tables and strings out (no Streamlit here)."""
