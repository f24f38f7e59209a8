"""Each lesson's view model: its state turned into rows, words and figure specs, without Streamlit widgets."""
