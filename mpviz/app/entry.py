"""The script Streamlit runs for `mpviz app` (through mpviz/app/serve.py): the app's shell, mpviz/app/main.py."""

from mpviz.app.main import run

run()
