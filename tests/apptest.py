"""The one way page tests open the app: AppTest of app.py, switched to a page, with URL parameters set."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def page_app(page: str, timeout: float = 240, **params: str) -> AppTest:
    """app.py switched to `page` ("pages/x.py") with `params` as ?key=value; not run yet (call .run())."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    for key, value in params.items():
        at.query_params[key] = value
    return at.switch_page(page)
