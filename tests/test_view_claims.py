"""mpviz.presentation.view_models.claims and mpviz.presentation.claim_evidence without a page: cards as data, the
view each evidence type picks, and a new claim added in four files (an engine module, a view module, its English and
its Chinese words) showing on the page and in the CLI, with no list kept in step by hand."""

import json
import shutil
import sys
import textwrap

import pytest

import mpviz.claims
import mpviz.presentation.claim_evidence
from mpviz import claims
from mpviz.__main__ import main
from mpviz.claims import registry
from mpviz.presentation import locales, memo
from mpviz.presentation.claim_evidence import dispatch
from mpviz.presentation.claim_evidence.blocks import Columns, Details, Figure, markdown_table, merged
from mpviz.presentation.view_models import claims as lesson


@pytest.fixture(autouse=True, scope="module")
def host():
    """Results shared in this process, as the app shares them for a class (mpviz.presentation.memo.InProcess)."""
    with memo.hosted(memo.InProcess()) as shared:
        yield shared


@pytest.fixture
def lang(host):
    """Build cards in a given language (the viewer's, as the app's host says it)."""

    def use(code: str) -> None:
        host.lang = code

    yield use
    host.lang = "en"


def texts(blocks) -> str:
    """Every text of `blocks`, nested ones too."""
    out = []
    for b in blocks:
        if isinstance(b, str):
            out.append(b)
        elif isinstance(b, Columns):
            out += [texts(col) for col in b.columns]
        elif isinstance(b, Details):
            out.append(texts(b.blocks))
    return "\n".join(out)


def figures(blocks) -> list[Figure]:
    out = []
    for b in blocks:
        if isinstance(b, Figure):
            out.append(b)
        elif isinstance(b, Columns):
            out += [f for col in b.columns for f in figures(col)]
        elif isinstance(b, Details):
            out += figures(b.blocks)
    return out


def test_blocks_merge_texts_and_tables_are_markdown_whose_cells_cannot_break_the_table():
    assert merged(["a", "", "b", Details("t", ()), "c"]) == ("a\n\nb", Details("t", ()), "c")
    table = markdown_table([{"x": "a|b", "y": "two\nlines"}])
    assert table.splitlines() == ["| x | y |", "|---|---|", "| a\\|b | two lines |"]


def test_every_evidence_type_of_the_registry_has_a_view_and_subtypes_pick_their_own():
    assert dispatch.view_of(claims.check(14).evidence).__name__ == "promote_view"  # a PolicyEvidence subclass
    assert dispatch.view_of(claims.check(1).evidence).__name__ == "policy_view"
    assert dispatch.view_of(claims.check(21).evidence).__name__ == "big_value_view"  # a StorageEvidence subclass
    assert dispatch.view_of(claims.check(101).evidence) is dispatch.words_only  # its words need nothing more
    with pytest.raises(ValueError, match="has a view already"):
        dispatch.shows(claims.PolicyEvidence)(lambda c, w: ())


@pytest.mark.parametrize("code", ["en", "zh"])
def test_a_card_is_its_source_verdict_parts_and_evidence_as_data(lang, code):
    lang(code)
    words = locales.load(code, "claims")
    card = lesson.card(claims.claim(21), claims.check(21))
    assert card.anchor == "claim-21" and card.title.startswith("21. ") and not card.pending
    said = texts(card.blocks)
    assert words["sources"]["004_9b39a333a37e4e48.txt"] in said  # where it is made, from the locale
    assert words["claims"]["bf16_holds_70000"]["section"] in said
    assert f":green-badge[{words['verdicts']['holds']}]" in said.splitlines()
    assert "70144" in said and "{" not in said  # measured, every field filled
    assert [f.key for f in figures(card.blocks)] == ["storage_21"]


def test_a_device_claim_shows_its_parts_in_a_column_per_device_and_folds_its_step_strips(lang):
    lang("en")
    card = lesson.card(claims.claim(1), claims.check(1))
    head = next(line for line in texts(card.blocks).splitlines() if line.startswith("| **CPU**"))
    assert head == "| **CPU** :red-badge[Does not hold] | **CUDA's policy** :green-badge[Holds] |"  # one per device
    (details,) = [b for b in card.blocks if isinstance(b, Details)]
    assert details.folded and figures((details,)) and not figures(card.blocks[: card.blocks.index(details)])


def test_a_pending_card_and_the_lesson_for_a_filter(lang):
    lang("en")
    pending = lesson.card(claims.claim(8), None)
    assert pending.pending and len(pending.blocks) == 1
    view = lesson.lesson("holds", "formats", (21, 4))
    assert "[21](#claim-21)" in "".join(view.overview) and "[4](#claim-4)" not in "".join(view.overview)
    assert [c.claim_id for s in view.sections for c in s.cards] == [21]
    assert "not measured yet: **51**" in view.tally and view.unplaced  # 51 claims not in (21, 4)
    assert lesson.lesson.cached("holds", "formats", (21, 4)) and not lesson.lesson.cached("holds", "formats", (21,))
    assert lesson.wanted(False) == tuple(c.id for c in claims.CLAIMS if not c.on_demand)


# ── a new claim: four files ──────────────────────────────────────────────────────────────────────────────────
ENGINE = '''
"""A toy claim, as a new claim is written: evidence, check and its declaration beside them."""
from dataclasses import dataclass

from mpviz.claims.registry import SEED_SFT
from mpviz.claims.verdicts import Part, judged


@dataclass(frozen=True)
class ToyEvidence:
    doubled: float


@dataclass(frozen=True)
class PlainEvidence:
    answer: int


def check_toy():
    ev = ToyEvidence(2.0 * 21)
    return judged(901, [Part("doubles", ev.doubled == 42.0)], ev, {"doubled": ev.doubled})


def check_plain():
    return judged(902, [Part("answers", True)], PlainEvidence(42), {})


CLAIM_SPECS = (
    dict(id=901, key="toy_doubles", seeds=(SEED_SFT,), check=check_toy, topic="code"),
    dict(id=902, key="toy_plain", seeds=(SEED_SFT,), check=check_plain, topic="code"),
)
'''
VIEW = '''
"""The toy claim's view: its evidence's type picks it."""
from mpviz.claims.toy_claim import ToyEvidence
from mpviz.presentation.claim_evidence.dispatch import shows
from mpviz.presentation.claim_evidence.words import say, table


@shows(ToyEvidence)
def toy_view(c, words):
    return say(c, words, {"doubled": c.evidence.doubled}), table([{"x": "21", "2x": f"{c.evidence.doubled:g}"}])
'''
WORDS = {
    "en": ("Doubling 21 gives 42", "A worked example", "21 doubled is 42", "Doubled: **{doubled:g}**.", "Answer"),
    "zh": ("21 乘以二得 42", "实际应用示例", "21 的两倍是 42", "两倍：**{doubled:g}**。", "答案"),
}


def _words(code: str) -> str:
    claim, section, part, explain, plain = WORDS[code]
    return textwrap.dedent(f'''
        [claims.toy_doubles]
        claim = "{claim}"
        short = "{claim}"
        section = "{section}"
        explain = "{explain}"
        [claims.toy_doubles.parts]
        doubles = "{part}"
        [claims.toy_plain]
        claim = "{plain}"
        short = "{plain}"
        section = "{section}"
        explain = "{plain}: **{{answer}}**"
        [claims.toy_plain.parts]
        answers = "{plain}"
    ''')


@pytest.fixture
def toy_claim(tmp_path, monkeypatch):
    """Two new claims written as a contributor would, in four files outside the tree (tmp_path): an engine module
    in mpviz.claims' package path, a view module in mpviz.presentation.claim_evidence's, and each language's words
    appended to a copy of the locales. Nothing else is touched; the registry and the views find them."""
    engine, views, words = tmp_path / "engine", tmp_path / "views", tmp_path / "locales"
    engine.mkdir(), views.mkdir()
    shutil.copytree(locales.LOCALES, words)
    (engine / "toy_claim.py").write_text(ENGINE)
    (views / "toy_view.py").write_text(VIEW)
    for code in ("en", "zh"):
        with open(words / code / "claims.toml", "a", encoding="utf-8") as f:
            f.write(_words(code))
    written = [engine / "toy_claim.py", views / "toy_view.py", *(words / code / "claims.toml" for code in ("en", "zh"))]

    monkeypatch.setattr(mpviz.claims, "__path__", [*mpviz.claims.__path__, str(engine)])
    evidence_views = mpviz.presentation.claim_evidence
    monkeypatch.setattr(evidence_views, "__path__", [*evidence_views.__path__, str(views)])
    monkeypatch.setattr(locales, "LOCALES", words)
    monkeypatch.setattr(dispatch, "_VIEWS", dict(dispatch._VIEWS))  # the toy's view registers in a copy
    locales.load.cache_clear()
    found = registry.gathered()  # what a fresh process would register: the running one has read its files
    monkeypatch.setattr(registry, "CLAIMS", found)
    monkeypatch.setattr(mpviz.claims, "CLAIMS", found)
    mpviz.presentation.claim_evidence.load_views()
    try:
        yield written
    finally:
        locales.load.cache_clear()
        for name in ("mpviz.claims.toy_claim", "mpviz.presentation.claim_evidence.toy_view"):
            sys.modules.pop(name, None)


@pytest.mark.xdist_group("serial")  # the claims registry and the locale files are patched for this process
def test_a_new_claim_is_four_files_and_shows_in_the_lesson_and_in_the_cli(toy_claim, capsys):
    """The lesson's view model, which the page draws (tests/test_page_claims.py draws the toy on the page)."""
    assert len(toy_claim) == 4
    assert [c.id for c in claims.CLAIMS][-2:] == [901, 902]
    view = lesson.lesson(claims.ALL, "code", (901, 902))
    cards = {c.claim_id: c for s in view.sections for c in s.cards}
    said = texts(cards[901].blocks)
    assert cards[901].title == "901. Doubling 21 gives 42"
    assert "Doubled: **42**." in said and "| 21 | 42 |" in said  # its own view: words, then its table
    assert "Answer: **42**" in texts(cards[902].blocks)  # no view written: its words filled from its evidence's fields
    assert "[901](#claim-901)" in "".join(view.overview) and "From *05 - Mixed-precision training setup" in said
    assert main(["claims", "--id", "901", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["claims"]
    assert row["verdict"] == "holds" and row["section"] == ["实际应用示例", "A worked example"]
