"""The words every claim view shares: this lesson's locale section, verdict badges, op and category names,
lists, and the two ways evidence is worded (a filled explanation, a table). Looked up when a view runs, never at
import, so every card is built in its session's language."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from mpviz import claims
from mpviz.presentation import text
from mpviz.presentation.claim_evidence.blocks import markdown_table

BADGE_COLORS = {
    "holds": "green",
    "partly_holds": "orange",
    "depends_on_device": "blue",
    "does_not_hold": "red",
    "inconclusive": "gray",
}


def lesson_words() -> Mapping:
    """The claims lesson's words in this session's language."""
    return text.section("claims")


def range_labels() -> dict:
    """The formats lesson's range chart, with this lesson's titles."""
    return {**text.section("formats")["figure"], **lesson_words()["labels"]}


def number_line_labels() -> dict:
    """The formats lesson's number line, untitled: the page titles it with a caption, which wraps."""
    return {**text.section("formats")["figure"], "number_line_title": ""}


def badge(verdict: str) -> str:
    return f":{BADGE_COLORS[verdict]}-badge[{lesson_words()['verdicts'][verdict]}]"


def value_class(cls: str) -> str:
    """What a stored number is ("normal", "subnormal", …: mpviz.formats.Encoding.cls) in this session's words."""
    return text.section("common")["value_classes"][cls]


def category(cat: str | None) -> str:
    return lesson_words()["category_phrase"][cat or "none"]


def short_category(cat: str | None) -> str:
    """A category's short name, breakable after each underscore so a narrow table can wrap it."""
    return lesson_words()["category_short"][cat or "none"].replace("_", "_\u200b")


def op_name(op: str) -> str:
    """ "aten::add.Tensor" / "aten.add.Tensor" → "add"."""
    return op.replace("::", ".").removeprefix("aten.").split(".")[0]


def code_list(names: Iterable[str]) -> str:
    t = lesson_words()
    return t["list_joiner"].join(f"`{n}`" for n in names) or t["no_ops"]


def ops_list(ops: tuple[str, ...]) -> str:
    return code_list(op_name(op) for op in ops)


def yes_no(flag: bool) -> str:
    return lesson_words()["yes" if flag else "no"]


def quoted_match(q: claims.Quoted) -> str:
    """What a quoted number really is, e.g. "float32's smallest subnormal value (1.401e-45)"."""
    t = lesson_words()
    found = [
        t["quoted"]["match"].format(format=m.format, field=t["field_names"][m.field], value=m.value) for m in q.matches
    ]
    return t["and_joiner"].join(found) or t["quoted"]["none"]


def say(c: claims.Checked, words: Mapping, fields: Mapping) -> str:
    """The claim's explanation filled with its measurements, then the conclusion its verdict supports, if any."""
    conclusion = words.get("conclusion", {}).get(c.verdict, "")
    return " ".join(t for t in (words["explain"], conclusion) if t).format(**fields)


def table(rows: list[dict]) -> str:
    """A small table (markdown): every cell wraps instead of being cut off (phones, projectors)."""
    return markdown_table(rows)
