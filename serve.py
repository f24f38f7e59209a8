"""`streamlit run serve.py`: the app (app.py) with the headers and checks a public host needs, sent by Streamlit
itself (view/security_headers.py says what and why). deploy/Dockerfile runs this; `streamlit run app.py` is the same
app without them (Streamlit 1.67 has no option for response headers), fine on your own machine.
"""

import streamlit as st
from starlette.middleware import Middleware

from view.security_headers import SecurityHeaders

app = st.App("app.py", middleware=[Middleware(SecurityHeaders)])
