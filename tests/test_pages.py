"""Every page of the app renders without an exception under each autocast dtype (Streamlit AppTest)."""

import pytest
from streamlit.testing.v1 import AppTest

PAGES = [
    "pages/attention.py",
    "pages/policy.py",
    "pages/formats.py",
    "pages/softmax.py",
    "pages/scaler.py",
    "pages/claims.py",
]


@pytest.mark.parametrize("dtype", ["off", "fp16", "bf16"])
@pytest.mark.parametrize("page", PAGES)
def test_page_renders(page, dtype):
    at = AppTest.from_file("../app.py", default_timeout=240)
    at.query_params["dtype"] = dtype
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title, "every page has a title"
