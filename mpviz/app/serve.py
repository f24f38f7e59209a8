"""The app (mpviz/app/main.py) with the headers and checks a public host needs, sent by Streamlit itself
(mpviz/app/serving/security_headers.py says what and why). `mpviz app` and deploy/Dockerfile run this file; `streamlit
run app.py` in a checkout is the same app without them (Streamlit 1.67 has no option for response headers), fine on your
own machine. Streamlit finds `app` by reading this file (an `st.App(...)` assignment), so it stays a literal call.
"""

from importlib.resources import files

import streamlit as st
from starlette.middleware import Middleware

from mpviz.app.serving.security_headers import SecurityHeaders

app = st.App(str(files("mpviz.app").joinpath("entry.py")), middleware=[Middleware(SecurityHeaders)])
