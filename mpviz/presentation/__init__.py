"""What mpviz shows, without Streamlit: each lesson's view model (view_models/, claim_evidence/), the engine runs
they share (runs, memoised through memo), the stepper's payload, the notebook widget (`mpviz.show`), the offline
lesson file, the figures and the words (mpviz/locales). Imports the engine, never mpviz.app."""
