"""Navigation comes from the lesson registry alone, and no legacy pages/ folder can take the first run.

Adding a lesson touches only its own files and one registry entry: a throw-away lesson registered here shows up in
the app's navigation, in the parametrised page tests' list and in the CLI's lesson listing.
"""

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from streamlit.runtime.pages_manager import PagesManager
from streamlit.testing.v1 import AppTest

from mpviz.app import lessons
from mpviz.presentation import locales
from tests import apptest, test_pages
from tests.apptest import failures
from tests.cli import run_cli
from tests.conftest import ROOT


def test_no_pages_folder_sits_beside_an_entry_script():
    """Streamlit runs a fresh process's first run in legacy multipage mode from a `pages/` folder beside the entry
    script, which could skip it: the pages live in the package instead."""
    for entry in (ROOT / "app.py", ROOT / "mpviz" / "app" / "entry.py"):
        assert not (entry.parent / "pages").exists(), entry


def test_a_fresh_process_runs_the_entry_script_first():
    at = AppTest.from_file(apptest.APP, default_timeout=120)
    at.switch_page("mpviz/pages/scaler.py").run()
    assert not failures(at)
    assert PagesManager.uses_pages_directory is not True
    assert at.session_state["_page"] == "scaler", "app.py ran: it names the lesson it shows"


@dataclass(frozen=True)
class _ThrowAwayLesson(lessons.Lesson):
    where: Path = Path()

    @property
    def page(self) -> Path:  # its page lives in tmp_path, not in the package
        return self.where


@pytest.fixture
def throwaway_lesson(monkeypatch, tmp_path):
    """A lesson that exists only for this test: its page file, its words, one registry entry, all in tmp_path (a copy
    of the locales beside its page): nothing is written into the repository or the installed package."""
    page_file = tmp_path / "zz_demo.py"
    page_file.write_text(
        'from mpviz.app import text\nfrom mpviz.app.page import page_header\n\npage_header(text.section("zz_demo"))\n'
    )
    page = _ThrowAwayLesson("zz_demo", ":material/science:", ("lessons",), run_config="none", where=page_file)
    words = shutil.copytree(locales.LOCALES, tmp_path / "locales")
    (words / "en" / "zz_demo.toml").write_text('title = "A throw-away lesson"\nintro = "It exists for one test."\n')
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
