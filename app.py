"""`streamlit run app.py`: the mpviz app from a checkout (mpviz/app/main.py; `mpviz app` starts the same app from
the installed package)."""

from mpviz.app.main import run

run()
