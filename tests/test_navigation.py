"""Navigation comes from the lesson registry alone, and the legacy pages/ workaround is needed (and works).

Adding a lesson touches only its own files and one registry entry: a throw-away lesson registered here shows up in
the app's navigation, in the parametrised page tests' list and in the CLI's lesson listing.
"""

import json
import shutil
from pathlib import Path

import pytest
from streamlit.runtime.pages_manager import PagesManager
from streamlit.testing.v1 import AppTest

from mpviz import lessons
from tests import apptest, test_pages
from tests.apptest import failures
from tests.cli import run_cli
from view import locales


def test_a_fresh_process_runs_app_py_first_even_with_a_pages_folder():
    at = AppTest.from_file(apptest.APP, default_timeout=120)  # AppTest resets the legacy flag: a fresh process
    at.switch_page("pages/scaler.py").run()
    assert not failures(at)
    assert PagesManager.uses_pages_directory is False
    assert at.session_state["_page"] == "scaler", "app.py ran: it names the lesson it shows"


def test_without_the_workaround_the_first_run_skips_app_py(monkeypatch):
    import view.navigation
    import view.page

    for module in (view.navigation, view.page):
        monkeypatch.setattr(module, "leave_legacy_pages_mode", lambda: None)
    at = AppTest.from_file(apptest.APP, default_timeout=120)
    at.switch_page("pages/scaler.py").run()
    assert PagesManager.uses_pages_directory is True  # Streamlit's legacy pages/ mode ran the page file itself
    assert "_page" not in at.session_state, "no app.py: no navigation, no language, no share link"
    PagesManager.uses_pages_directory = None


@pytest.fixture
def throwaway_lesson(monkeypatch, tmp_path):
    """A lesson that exists only for this test: its page file, its words, one registry entry. The page goes into a
    copy of the app's entry files (app.py, pages/; assets/ linked) and the words into a copy of locales/, both in
    tmp_path: nothing is written into the repository."""
    root = Path(apptest.APP).parent
    app = tmp_path / "app"
    shutil.copytree(root / "pages", app / "pages")
    shutil.copy(apptest.APP, app / "app.py")
    (app / "assets").symlink_to(root / "assets")
    page = lessons.Lesson("zz_demo", ":material/science:", ("lessons",), run_config="none")
    (app / page.page).write_text(
        'from view import text\nfrom view.page import page_header\n\npage_header(text.section("zz_demo"))\n'
    )
    words = shutil.copytree(locales.LOCALES, tmp_path / "locales")
    (words / "en" / "zz_demo.toml").write_text('title = "A throw-away lesson"\nintro = "It exists for one test."\n')
    monkeypatch.setattr(apptest, "APP", str(app / "app.py"))  # tests.apptest.page_app opens the copy too
    monkeypatch.setattr(locales, "LOCALES", words)
    monkeypatch.setattr(lessons, "LESSONS", (*lessons.LESSONS, page))
    locales.load.cache_clear()
    locales.plain.cache_clear()
    yield page
    locales.load.cache_clear()  # words read from the copy must not outlive it
    locales.plain.cache_clear()


def test_a_registered_lesson_is_in_navigation_tests_and_cli(throwaway_lesson, capsys):
    at = AppTest.from_file(apptest.APP, default_timeout=120).run()
    assert not failures(at)
    at.switch_page(throwaway_lesson.page).run()
    assert not failures(at)
    assert [t.value for t in at.title] == ["A throw-away lesson"]
    assert [entry.page for entry in lessons.LESSONS[:-1]] == test_pages.PAGES  # the page tests' list: the registry
    test_pages.test_page_renders(throwaway_lesson.page, "bf16")  # a registered lesson gets every page's test
    listed = json.loads(run_cli(capsys, "lessons", "--json").stdout)["lessons"]
    assert throwaway_lesson.slug in [entry["slug"] for entry in listed]
