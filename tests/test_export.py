"""`python -m mpviz export`: one HTML file that holds the whole attention lesson and works from file://.

The file is checked as text (every piece inside it, no address outside it, the JSON the same as the app's payload,
nothing in a string that can end its <script>) and in Chromium opened from file:// with every request that is not
the file itself refused: the stepper renders, ← → step it, the language switch turns it Chinese in place, and axe
finds nothing critical or serious in either language.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mpviz.__main__ import main
from mpviz.bundle import LessonBundle, lesson_bundle
from mpviz.model import AttentionConfig
from mpviz.presentation import locales
from mpviz.presentation.lesson_file import KEY, lesson_html, script_json
from mpviz.presentation.palette import DTYPE_COLORS
from mpviz.presentation.stepper_payload import BUILT_JS, asset, stepper_payload, stepper_text
from tests.cli import run_cli
from tests.test_a11y_browser import AXE_JS, AXE_RUN, BLOCKING
from tests.test_stepper import STATE

# JSON data elements of the file: id → text. "<" never occurs inside them, so the first "</script>" ends each one.
_DATA = re.compile(r'<script type="application/json" id="([\w-]+)">(.*?)</script>', re.S)
# XML namespace names: identifiers the DOM compares, never fetched (the stepper draws its graph as SVG)
NAMESPACES = {"http://www.w3.org/2000/svg"}
SMALL = ["--seq", "4", "--dim", "8", "--heads", "2"]


def _data(page: str) -> dict[str, object]:
    return {element_id: json.loads(text) for element_id, text in _DATA.findall(page)}


@pytest.fixture(scope="module")
def lesson(tmp_path_factory) -> Path:
    """The default lesson, written by the CLI as a teacher would."""
    path = tmp_path_factory.mktemp("export") / "lesson.html"
    assert main(["export", "--out", str(path)]) == 0
    return path


def test_the_cli_writes_one_file_with_the_whole_lesson_inside(lesson, printout):
    page = lesson.read_text(encoding="utf-8")
    data = _data(page)
    assert set(data) == {"mpv-payload", "mpv-words", "mpv-module"}
    assert data["mpv-module"] == BUILT_JS.read_text(encoding="utf-8")  # the app's own built module, as is
    assert asset("stepper.css") in page and asset("stepper.html") in page
    assert data["mpv-payload"]["bundle"]["run"]["config"] == AttentionConfig().to_dict()
    assert data["mpv-payload"]["meta"] == {"key": KEY, "locale": "en"}
    assert set(data["mpv-words"]) == set(locales.LANGUAGES)
    # nothing to load from anywhere: no src/href attribute, no stylesheet link, no address but XML namespaces
    assert not re.search(r"\s(src|href)=|<link\b|@import|url\((?!#)", page)  # url(#id): an SVG marker here
    assert set(re.findall(r"https?://[\w./-]+", page)) <= NAMESPACES
    assert "default-src 'none'" in page  # and the browser is told to fetch nothing
    printout(f"default lesson file: {lesson.stat().st_size:,} bytes ({lesson.stat().st_size / 1024:.0f} KiB)")


@pytest.mark.parametrize("lang", locales.LANGUAGES)
def test_the_json_inside_is_the_apps_payload_and_words(lang):
    bundle = lesson_bundle(AttentionConfig(seq_len=4, d_model=8, n_heads=2), "cpu", "bf16")
    data = _data(lesson_html(bundle, lang))
    app = stepper_payload(bundle.to_json(), stepper_text(lang), DTYPE_COLORS, key=KEY, locale=lang)
    assert data["mpv-payload"] == json.loads(app)
    for code in locales.LANGUAGES:
        words = data["mpv-words"][code]
        assert words["stepper"] == stepper_text(code)
        assert words["page"]["title"] == locales.load(code, "attention")["title"]
    assert f'<html lang="{lang}">' in lesson_html(bundle, lang)


def test_no_string_can_end_its_script_element():
    hostile = "</script><script>window.pwned = 1</script><!-- <script> </SCRIPT "
    assert "<" not in script_json(json.dumps({"s": hostile}))
    assert json.loads(script_json(json.dumps({"s": hostile}, ensure_ascii=False))) == {"s": hostile}
    real = lesson_bundle(AttentionConfig(seq_len=4, d_model=8, n_heads=2), "cpu", "bf16")
    bundle = LessonBundle({**real.data, "run": {**real.data["run"], "torch_version": hostile}})
    page = lesson_html(bundle, "en")
    assert len(re.findall(r"<script\b", page, re.I)) == len(re.findall(r"</script", page, re.I)) == 4
    assert _data(page)["mpv-payload"]["bundle"]["run"]["torch_version"] == hostile


def test_a_config_outside_the_limits_writes_nothing(capsys, tmp_path):
    out = tmp_path / "lesson.html"
    for args in (["--seq", "100000"], ["--lang", "fr"], ["--dtype", "float64"], ["--heads", "3", "--dim", "8"]):
        r = run_cli(capsys, "export", "--out", str(out), *args)
        assert r.returncode == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1, r
        assert not out.exists()


def test_a_file_that_cannot_be_written_is_one_line_exit_2(capsys, tmp_path):
    r = run_cli(capsys, "export", "--out", str(tmp_path / "missing" / "lesson.html"), *SMALL)
    assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1 and "cannot write" in r.stderr


def test_json_says_what_was_written(capsys, tmp_path):
    out = tmp_path / "课.html"
    r = run_cli(capsys, "export", "--out", str(out), "--lang", "zh", "--dtype", "fp16", *SMALL, "--json")
    assert r.returncode == 0 and r.stdout.isascii(), r
    said = json.loads(r.stdout)
    assert said["out"] == str(out) and said["bytes"] == out.stat().st_size and said["lang"] == "zh"
    assert said["autocast_dtype"] == "float16" and said["events"] > 0
    assert '<html lang="zh">' in out.read_text(encoding="utf-8")


# ── from file://, offline ──────────────────────────────────────────────────────────────────────────────────
# test_stepper's STATE, reading the stepper inside the lesson file's host instead of Streamlit's
_STREAMLIT_HOST = ".st-key-stepper [data-testid=stBidiComponentIsolated]"
assert _STREAMLIT_HOST in STATE
FILE_STATE = STATE.replace(_STREAMLIT_HOST, "#mpv-stepper")
ROOT = "document.getElementById('mpv-stepper').shadowRoot"


def _blocking(findings: list[dict]) -> list[str]:
    return [f"{f['rule']} ({f['impact']}) {f['target']}" for f in findings if f["impact"] in BLOCKING]


@pytest.mark.browser
def test_the_file_works_from_file_urls_with_the_network_blocked(browser, lesson, printout):
    context = browser.new_context()
    refused = []

    def only_the_file(route):
        if route.request.url.startswith("file:"):
            route.continue_()
        else:
            refused.append(route.request.url)
            route.abort()

    context.route("**/*", only_the_file)
    page = context.new_page()
    errors, requests = [], []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    try:
        page.goto(lesson.as_uri())
        page.wait_for_function(f"({FILE_STATE})() !== null", timeout=30_000)
        drawn_ms = page.evaluate("performance.now()")  # from navigation start to the stepper drawn (polled)
        first = page.evaluate(FILE_STATE)
        assert first["step"] == 0 and first["title"]
        page.evaluate(AXE_JS)
        assert _blocking(page.evaluate(AXE_RUN, "#mpv-stepper")) == []
        page.keyboard.press("ArrowRight")
        page.wait_for_function(f"({FILE_STATE})().step === 1")
        stepped = page.evaluate(FILE_STATE)
        assert stepped["event"] != first["event"] and stepped["title"] != first["title"]

        zh = locales.load("zh", "stepper")["controls"]
        page.click("button[data-lang=zh]")
        page.wait_for_function("document.documentElement.lang === 'zh'")
        buttons = page.evaluate(f"[...{ROOT}.querySelectorAll('button')].map(b => b.textContent)")
        assert zh["prev"] in buttons and zh["next"] in buttons  # the stepper speaks Chinese ...
        flipped = page.evaluate(FILE_STATE)
        assert flipped["event"] == stepped["event"] and flipped["step"] == 1  # ... on the same step
        assert page.text_content("h1") == locales.load("zh", "attention")["title"]
        assert page.title() == locales.load("zh", "attention")["title"]
        assert _blocking(page.evaluate(AXE_RUN, "#mpv-stepper")) == []

        page.reload()  # the place and the language live in the file:// URL
        page.wait_for_function(f"({FILE_STATE})() !== null", timeout=30_000)
        assert page.evaluate(FILE_STATE)["event"] == stepped["event"]
        assert page.evaluate("document.documentElement.lang") == "zh"

        blocked = page.evaluate("fetch('https://example.com/x').then(() => 'fetched', () => 'blocked')")
        assert blocked == "blocked"  # the file's policy refuses it before any request leaves
    finally:
        context.close()
    printout(f"lesson file from file://: stepper drawn {drawn_ms:.0f} ms after navigation start (Chromium)")
    assert errors == []
    assert refused == []
    assert {r.split(":")[0] for r in requests} <= {"file", "blob"}
