"""What mpviz shows, without Streamlit: the stepper's payload, the notebook widget (`mpviz.show`), the offline lesson
file, the figures and the words (mpviz/locales). Imports the engine, never mpviz.app."""
