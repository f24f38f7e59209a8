"""Every page of the app renders without an exception under each autocast dtype (Streamlit AppTest)."""

import pytest

from mpviz.app.lessons import LESSONS
from tests.apptest import failures, page_app

PAGES = [entry.page for entry in LESSONS]
pytestmark = pytest.mark.shared_results  # each page reads what the first run of its config computed


@pytest.mark.parametrize("dtype", ["off", "fp16", "bf16"])
@pytest.mark.parametrize("page", PAGES)
def test_page_renders(page, dtype):
    at = page_app(page, dtype=dtype).run()
    assert not failures(at), failures(at)
    assert at.title, "every page has a title"
