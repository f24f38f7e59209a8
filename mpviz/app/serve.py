"""The app (mpviz/app/main.py) with the headers and checks a public host needs, sent by Streamlit itself
(mpviz/app/serving/security_headers.py says what and why), warmed in the background once it answers
(mpviz/app/warm_up.py: a first visitor finds the lessons and the tour's stops computed). `mpviz app` and
deploy/Dockerfile run this file; `streamlit run app.py` in a checkout is the same app without them (Streamlit 1.67 has
no option for response headers), fine on your own machine. Streamlit finds `app` by reading this file (an `st.App(...)`
assignment), so it stays a literal call.
"""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.resources import files

import streamlit as st
from starlette.middleware import Middleware

from mpviz.app import warm_up
from mpviz.app.serving.security_headers import SecurityHeaders


@asynccontextmanager
async def warmed(_app: st.App) -> AsyncIterator[None]:
    """Start the warm-up (a thread that waits for health itself, so start-up and health are not delayed)."""
    warm_up.start()
    yield


app = st.App(str(files("mpviz.app").joinpath("entry.py")), middleware=[Middleware(SecurityHeaders)], lifespan=warmed)
