"""The lesson pages: one short Streamlit script per lesson (mpviz.app.lessons lists them); run, never imported."""
