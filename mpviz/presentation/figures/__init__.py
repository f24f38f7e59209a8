"""Plotly figures, one module per lesson, sharing `style`. No streamlit here: figures are testable on their own."""
