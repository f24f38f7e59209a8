"""中文 / English: both languages hold the same words, every page renders in each, a Chinese page shows no English
sentence, and the language lives in the URL (chosen there, else from the browser, kept across pages and links).

The English check reads what a visitor would read, from every element AppTest sees: markdown, captions, headings,
alerts, widget labels, options and help, metrics, table headers and text cells, expander labels, and from each
plotly figure's JSON its titles, axis titles, tick and legend texts, annotations and hover templates. Code spans,
HTML tags, link targets, plotly's %{…} fields and identifiers (anything with a digit, underscore, dot or colon:
op names, dtypes, numbers) are removed first; what remains fails on a run of three or more English words.
"""

from __future__ import annotations

import ast
import json
import re
import string
import tomllib
from pathlib import Path

import pytest
from google.protobuf.json_format import MessageToDict
from streamlit.runtime.context import ContextProxy

from mpviz.app import text
from mpviz.app.language import browser_language
from mpviz.app.lessons import LESSONS
from tests.apptest import failures, page_app

ROOT = Path(__file__).resolve().parents[1]
LOCALES = ROOT / "mpviz" / "locales"

# Quoted as written, not translatable: each tutorial's own Chinese title and section headings (some mix in English,
# e.g. "Chat Dialogue Log：…"), shown as the claims page's sources.
QUOTED = sorted(
    set(text.load("zh", "claims")["sources"].values())
    | {w["section"] for w in text.load("zh", "claims")["claims"].values() if "section" in w},
    key=len,
    reverse=True,
)
# English runs a Chinese reader meets as names: keep this list short and say why each is here.
ALLOWED_RUNS = {
    "English",  # the language switch names each language in its own words
}


# ── the words themselves ────────────────────────────────────────────────────────────────────────────────────
def _flat(table: dict, prefix: str = "") -> dict[str, object]:
    """{"a.b.c": value} for every leaf; tables and arrays appear under their own key too (as their type)."""
    out: dict[str, object] = {}
    for key, value in table.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            out[path] = dict
            out |= _flat(value, f"{path}.")
        elif isinstance(value, list):
            out[path] = list
            out |= _flat(dict(enumerate(value)), f"{path}.")
        else:
            out[path] = value
    return out


def _placeholders(template: str) -> list[tuple[str, str]]:
    return sorted((name, spec) for _, name, spec, _ in string.Formatter().parse(template) if name is not None)


def _words(lang: str, name: str) -> dict[str, object]:
    return _flat(tomllib.loads((LOCALES / lang / f"{name}.toml").read_text(encoding="utf-8")))


SECTIONS = sorted(p.stem for p in (LOCALES / "en").glob("*.toml"))


def test_every_locale_file_exists_in_each_language():
    for lang in text.LANGUAGES:
        assert sorted(p.stem for p in (LOCALES / lang).glob("*.toml")) == SECTIONS, lang


@pytest.mark.parametrize("name", SECTIONS)
def test_both_languages_have_the_same_keys_placeholders_and_markup(name):
    en, zh = _words("en", name), _words("zh", name)
    assert sorted(set(en) - set(zh)) == [], "keys only in English"
    assert sorted(set(zh) - set(en)) == [], "keys only in Chinese"
    for key, value in en.items():
        other = zh[key]
        assert type(other) is type(value) or {value, other} <= {dict, list}, key
        if not isinstance(value, str):
            continue
        assert _placeholders(other) == _placeholders(value), key
        assert other.count("`") % 2 == 0 and other.count("**") % 2 == 0, f"{key}: unbalanced markup"
        assert re.findall(r"\]\((#[\w-]+)\)", other) == re.findall(r"\]\((#[\w-]+)\)", value), f"{key}: links"
        assert re.findall(r":\w+(?:-badge)?\[", other) == re.findall(r":\w+(?:-badge)?\[", value), f"{key}: colours"


def _engine_reasons() -> set[str]:
    """Every reason mpviz can put in a ConfigError: literal fourth arguments, and the last item of the 5-tuples
    a module checks in a loop that raises ConfigError(name, value, limit, reason)."""
    found = set()
    for path in (ROOT / "mpviz").rglob("*.py"):
        tree = ast.parse(path.read_text())
        calls = [
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "ConfigError" and len(n.args) == 4
        ]
        found |= {c.args[3].value for c in calls if isinstance(c.args[3], ast.Constant)}
        if any(isinstance(c.args[3], ast.Name) for c in calls):
            found |= {
                n.elts[-1].value
                for n in ast.walk(tree)
                if isinstance(n, ast.Tuple) and len(n.elts) == 5 and isinstance(n.elts[-1], ast.Constant)
            }
    return found


def test_every_reason_the_engine_gives_has_words():
    reasons = _engine_reasons()
    assert {"out of range", "wrong type", "too long to train", "nothing to normalise"} <= reasons  # the scan works
    assert sorted(reasons - set(text.load("en", "common")["reasons"])) == []


@pytest.mark.parametrize(
    "locale, lang",
    [("zh-CN", "zh"), ("zh", "zh"), ("zh-Hans-CN", "zh"), ("zh_TW", "zh"), ("en-US", "en"), ("de", "en"), (None, "en")],
)
def test_a_browser_asking_for_any_chinese_gets_chinese(locale, lang):
    assert browser_language(locale) == lang


# ── what a page shows ───────────────────────────────────────────────────────────────────────────────────────
SHOWN_FIELDS = {"body", "label", "help", "placeholder", "options", "content", "text", "name", "hovertemplate"}
SHOWN_FIELDS |= {"ticktext", "x", "y"}  # category axes: their values are the tick labels


def _nodes(node):
    yield node
    if isinstance(getattr(node, "children", None), dict):
        for child in node.children.values():
            yield from _nodes(child)


def _leaves(obj, field=""):
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield from _leaves(value, key)
    elif isinstance(obj, list):
        for value in obj:
            yield from _leaves(value, field)
    elif isinstance(obj, str):
        yield field, obj


def shown_texts(at) -> list[tuple[str, str]]:
    """(element type, text) for every piece of text the page shows (see the module docstring)."""
    out = []
    for node in _nodes(at._tree):
        kind, proto = getattr(node, "type", None), getattr(node, "proto", None)
        if kind in ("code", "html", "bidi_component") or not hasattr(proto, "DESCRIPTOR"):
            continue  # code is code; html is the app's CSS; the stepper's words are checked from its payload
        if kind in ("dataframe", "table"):
            frame = node.value
            out += [(kind, str(c)) for c in (*frame.columns, frame.index.name) if c is not None]
            out += [(kind, v) for c in frame.columns for v in frame[c] if isinstance(v, str)]
            continue
        fields = MessageToDict(proto)
        if kind == "plotly_chart":
            fields = json.loads(fields.get("spec", "{}"))
            fields.get("layout", {}).pop("template", None)
        out += [(kind, s) for field, s in _leaves(fields) if field in SHOWN_FIELDS]
    return out


IDENTIFIER = re.compile(r"\S*[\d_.:/\\=]\S*")  # op names, dtypes, numbers, paths, key=value


def english_runs(shown: str, n: int = 3) -> list[str]:
    """Runs of `n` or more English words in `shown` once code, markup and identifiers are taken out."""
    s = re.sub(r"`[^`]*`", " ", shown)
    s = re.sub(r"<[^>]*>|%\{[^}]*\}|\]\([^)]*\)|:\w+(?:-badge)?\[", " ", s)  # tags, plotly fields, links, colours
    for quoted in QUOTED:
        s = s.replace(quoted, " ")
    s = IDENTIFIER.sub(" ", re.sub(r"[.,;:!?)]+(?=\s|$)", " ", s))  # a sentence's own full stop is no identifier
    runs = []
    for chunk in re.split(r"[^A-Za-z' ]", s):  # any other character (CJK, punctuation) ends a run
        for run in re.findall(r"[A-Za-z']+(?: [A-Za-z']+)*", chunk):
            if len(run.split()) >= n and run not in ALLOWED_RUNS:
                runs.append(run)
    return runs


def english_in(at) -> list[str]:
    return sorted({f"{kind}: {run} ⟵ {shown[:90]!r}" for kind, shown in shown_texts(at) for run in english_runs(shown)})


def test_the_english_detector_finds_sentences_and_passes_identifiers():
    sentence = "GradScaler multiplies the loss by the scale"
    assert english_runs(f"{sentence}.") == [sentence]
    assert english_runs("`aten.addmm.default` 在 bf16 autocast 下 → **float32**") == []
    assert english_runs("torch.cuda.amp.autocast(dtype=torch.bfloat16) 能运行；T=16 d=64 H=4") == []
    assert english_runs("出自 *Chat Dialogue Log：scripts/mid_train.py 中期训练代码的混合精度训练*") == []
    assert english_runs("缩放因子 · [%{base:.9g}, %{x:.3g} wide]<extra>× scale 65536</extra>") == []
    assert english_runs("本页 out of range（上限 64）") == ["out of range"]


# claims: the slow checks too (training, timing: their cards carry the most words)
PARAMS = {"claims": {"slow": "1"}}


@pytest.mark.shared_results
@pytest.mark.parametrize("lesson", LESSONS, ids=lambda entry: entry.slug)
def test_every_page_renders_in_both_languages_and_the_chinese_one_shows_no_english(lesson):
    for lang in ("zh", "en"):  # the engine's results are cached in between: the second run only draws
        at = page_app(lesson.page, lang=lang, **PARAMS.get(lesson.slug, {})).run()
        assert not failures(at), (lang, failures(at))
        title = text.load(lang, lesson.slug)["title"]
        assert [t.value for t in at.title] == [title], lang
        assert at.query_params.get("lang") == {"zh": "zh", "en": None}[lang], "English, English browser: no ?lang"
        if lang == "zh":
            assert english_in(at) == []


def test_chinese_warnings_say_why_in_chinese():
    """The engine's reasons (ConfigError.reason) and the sidebar's choices are words of the view, not English."""
    at = page_app("mpviz/pages/formats.py", lang="zh", seq="99999", heads="3", attn="sdpa").run()
    assert not failures(at)
    warnings = " ".join(w.value for w in at.warning)
    assert "超出范围" in warnings and "必须能整除 d_model" in warnings
    assert english_in(at) == []
    at = page_app("mpviz/pages/softmax.py", lang="zh", source="list", logits="-inf,-inf").run()
    assert not failures(at)
    assert "没有可归一化的值" in " ".join(w.value for w in at.warning) and english_in(at) == []


def test_the_stepper_speaks_the_page_language():
    at = page_app("mpviz/pages/attention.py", lang="zh").run()
    assert not failures(at)
    (mount,) = at.get("bidi_component")
    payload = json.loads(mount.proto.bytes)
    assert payload["meta"]["locale"] == "zh"
    assert payload["text"] == {"ui": text.plain("zh", "stepper"), "glossary": text.plain("zh", "glossary")}
    words = [s for _, s in _leaves(payload["text"])]
    assert len(words) > 150
    braces = re.compile(r"\{\w+\}")  # placeholders the component fills in
    assert sorted({run for s in words for run in english_runs(braces.sub(" ", s))}) == []


# ── the language in the URL ────────────────────────────────────────────────────────────────────────────────
def _share_link(at) -> str:
    (link,) = [c.value for c in at.sidebar.code]
    return link


def test_the_language_survives_a_page_switch_and_is_in_the_share_link():
    at = page_app("mpviz/pages/policy.py", lang="zh").run()
    assert "lang=zh" in _share_link(at)
    at.switch_page("mpviz/pages/claims.py").run()  # Streamlit clears the URL on a page switch; the session keeps it
    assert not failures(at)
    assert at.query_params["lang"] == "zh" and at.title[0].value == text.load("zh", "claims")["title"]
    at.switch_page("mpviz/pages/formats.py").run()
    assert at.query_params["lang"] == "zh" and "lang=zh" in _share_link(at)


def test_the_sidebar_switch_changes_the_language_in_the_same_rerun():
    at = page_app("mpviz/pages/formats.py").run()
    switch = at.sidebar.button_group(key="lang")
    assert at.title[0].value == text.load("en", "formats")["title"] and switch.value == "en"
    switch.set_value("zh").run()
    assert at.title[0].value == text.load("zh", "formats")["title"] and at.query_params["lang"] == "zh"
    summary = text.load("zh", "common")["run_summary"].split("{")[0]  # the sidebar speaks it too
    assert any(c.value.startswith(summary) for c in at.sidebar.caption)


def test_a_chinese_browser_opens_in_chinese_unless_the_link_says_otherwise(monkeypatch):
    monkeypatch.setattr(ContextProxy, "locale", property(lambda self: "zh-CN"))
    at = page_app("mpviz/pages/formats.py").run()
    assert at.title[0].value == text.load("zh", "formats")["title"]
    assert at.query_params["lang"] == "zh", "a link from this view opens in Chinese for anyone"
    at = page_app("mpviz/pages/formats.py", lang="en").run()
    assert at.title[0].value == text.load("en", "formats")["title"]
    assert at.query_params["lang"] == "en", "an English choice in a Chinese browser survives a reload"


def test_a_bad_language_in_the_link_warns_and_falls_back_to_the_browsers():
    at = page_app("mpviz/pages/formats.py", lang="klingon").run()
    assert not failures(at)
    assert at.title[0].value == text.load("en", "formats")["title"]
    assert any("lang=klingon" in w.value for w in at.warning) and "lang" not in at.query_params
