"""Pure figure, table and HTML builders shared by two or more pages: data in, figures out, no Streamlit."""
