"""`streamlit run app.py`: the mpviz app from a checkout (mpviz/app/main.py; `mpviz app` starts the same app from
the installed package)."""

from mpviz.app.serving import workers

workers.default_pool()  # (imports no torch) the workers import theirs on the other core while the app imports below
from mpviz.app.main import run  # noqa: E402

run()
