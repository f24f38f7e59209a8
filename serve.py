"""`streamlit run serve.py`: the app (app.py) with the headers and checks a public host needs, sent by Streamlit
itself (view/security_headers.py says what and why), warmed in the background once it answers (view/warm_up.py:
a first visitor finds the lessons and the tour's stops computed). deploy/Dockerfile runs this; `streamlit run app.py`
is the same app without them (Streamlit 1.67 has no option for response headers, nor a start-up hook), fine on your
own machine.
"""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import streamlit as st
from starlette.middleware import Middleware

from view import warm_up
from view.security_headers import SecurityHeaders


@asynccontextmanager
async def warmed(_app: st.App) -> AsyncIterator[None]:
    """Start the warm-up (a thread that waits for health itself, so start-up and health are not delayed)."""
    warm_up.start()
    yield


app = st.App("app.py", middleware=[Middleware(SecurityHeaders)], lifespan=warmed)
