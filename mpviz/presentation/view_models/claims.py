"""The claims lesson's view model: the filters and the measured claims → the overview and the cards, as data.

`lesson(verdict, topic, measured_ids)` is everything the page draws, built once per process and language for each
filter state (mpviz.presentation.memo) from the claims' shared measurements (`measured`): the verdict tally, one
overview table per topic, and per topic the cards, each a title and a few blocks
(mpviz.presentation.claim_evidence.blocks) that its evidence's view returned
(mpviz.presentation.claim_evidence.dispatch). Nothing here draws: mpviz/pages/claims.py does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import zip_longest

from mpviz import claims
from mpviz.presentation import runs, text
from mpviz.presentation.claim_evidence import BADGE_COLORS, badge, op_name, view_of
from mpviz.presentation.claim_evidence.blocks import Block, caption, markdown_table, merged
from mpviz.presentation.memo import memoised

__all__ = [
    "FILTERS",
    "SUMMARY_ANCHOR",
    "TOPIC_FILTERS",
    "TOPIC_TERMS",
    "Card",
    "Lesson",
    "Section",
    "anchor",
    "card",
    "lesson",
    "measured",
    "wanted",
]

FILTERS = (claims.ALL, *claims.VERDICTS)
TOPIC_FILTERS = (claims.ALL, *claims.TOPICS)
SUMMARY_ANCHOR = "at-a-glance"
TOPIC_TERMS = {  # the glossary terms each topic's cards use (tooltips on the topic's heading)
    "autocast": ("autocast", "aten_op", "cast", "lower_precision_fp", "fp32", "fp32_set_opt_dtype", "promote"),
    "formats": ("ulp", "binade", "subnormal", "saturation"),
    "training": ("loss_scale", "autograd_node"),
    "code": ("autocast",),
}


@dataclass(frozen=True)
class Card:
    """One claim's card: its title (an anchored heading), then its blocks; `pending`: not measured yet."""

    claim_id: int
    anchor: str
    title: str
    blocks: tuple[Block, ...]
    pending: bool = False


@dataclass(frozen=True)
class Section:
    """One topic's heading and cards; a folded section (the reader has not opened it) holds no cards, only how
    many it would show: a class opening the page draws the overview and four headings, not fifty cards."""

    topic: str
    heading: str
    cards: tuple[Card, ...]
    count: int
    foldable: bool  # all topics are shown: the reader opens each one's cards (one topic picked: shown, not foldable)

    @property
    def folded(self) -> bool:
        return self.count > 0 and not self.cards


@dataclass(frozen=True)
class Lesson:
    """What the page shows for one filter state: the tally line, the overview's tables (one per topic), a note on
    claims a verdict filter cannot place yet, and the cards by topic (none: `nothing_shown`)."""

    tally: str
    overview: tuple[str, ...]
    unplaced: str
    sections: tuple[Section, ...]

    @property
    def nothing_shown(self) -> bool:
        return not self.sections


def wanted(slow: bool) -> tuple[int, ...]:
    """The claims to measure: the fast ones, and the slow ones (training, timing) when asked for."""
    return tuple(c.id for c in claims.CLAIMS if slow or not c.on_demand)


def measured(claim_id: int) -> claims.Checked:
    """One claim's check, computed once per host for every session (in the app, in a worker process; it needs no
    words: one result for both languages, mpviz.presentation.runs.claim_check); slow checks wait for the heavy lane."""
    return runs.claim_check(claim_id)


def anchor(claim: claims.Claim) -> str:
    return f"claim-{claim.id}"


def source_line(claim: claims.Claim, words: Mapping) -> str:
    """Where the claim is made: its first source's title and heading, then the other sources' titles."""
    titles = words["sources"]
    line = words["source"].format(title=titles[claim.seeds[0]], section=words["claims"][claim.key]["section"])
    if len(claim.seeds) > 1:
        others = words["list_joiner"].join(f"*{titles[s]}*" for s in claim.seeds[1:])
        line += "  \n" + words["also_in"].format(titles=others)
    return line


def _part_line(part: claims.Part, claim_words: Mapping, words: Mapping) -> str:
    """✓ or ✗, then what the part says (its subject filled in)."""
    subject = (part.subject or "").replace("\n", "; ")
    subject = op_name(subject) if subject.startswith("aten::") else subject  # "aten::add.Tensor" → "add"
    mark = words["part_holds" if part.holds else "part_fails"]
    return words["part_line"].format(mark=mark, text=claim_words["parts"][part.code].format(subject=subject))


def parts_block(checked: claims.Checked, claim_words: Mapping, words: Mapping) -> str:
    """What the claim says, part by part: a list, or where the parts were measured per device, a table with one
    column per device headed by its verdict (one markdown element, where columns of lists were five)."""
    title = f"**{words['parts_title']}**\n\n"
    devices = list(dict.fromkeys(p.device for p in checked.parts))
    if devices == [None]:
        return title + "\n".join("- " + _part_line(p, claim_words, words) for p in checked.parts)
    heads = {d: f"**{words['device_short'][d]}** {badge(checked.device_verdicts[d])}" for d in devices}
    columns = {d: [_part_line(p, claim_words, words) for p in checked.parts if p.device == d] for d in devices}
    rows = zip_longest(*columns.values(), fillvalue="")
    return title + markdown_table([dict(zip(heads.values(), row, strict=True)) for row in rows])


def card(claim: claims.Claim, checked: claims.Checked | None) -> Card:
    """One claim's card in this session's language: where it is made, its verdict, its parts, its evidence."""
    words = text.section("claims")
    claim_words = words["claims"][claim.key]
    title = words["card_title"].format(id=claim.id, claim=claim_words["claim"])
    source = caption(source_line(claim, words))
    if checked is None:
        return Card(claim.id, anchor(claim), title, (source,), pending=True)
    blocks: list[Block] = [source, badge(checked.verdict)]
    if checked.about:
        blocks.append(caption(words["about"].format(device=words["labels"]["device_names"][checked.about])))
    if checked.parts:
        blocks.append(parts_block(checked, claim_words, words))
    blocks += view_of(checked.evidence)(checked, claim_words)
    blocks.append(words["back"])
    return Card(claim.id, anchor(claim), title, merged(blocks))


def _overview(
    shown: tuple[claims.Claim, ...], results_by_id: Mapping[int, claims.Checked], open_topics: frozenset[str]
) -> tuple[str, str]:
    """The tally of verdicts (one line of badges), and one compact table (markdown) per topic; a claim's number
    links to its card, or to its topic's heading (where its cards are opened) while they are folded."""
    words = text.section("claims")
    counts = claims.verdict_counts(results_by_id.values())
    pending = sum(c.id not in results_by_id for c in claims.CLAIMS)
    tally = [words["count"].format(color=BADGE_COLORS[v], label=words["verdicts"][v], n=n) for v, n in counts.items()]
    tally.append(words["count"].format(color="gray", label=words["summary_pending"], n=pending))
    head = words["summary_cols"]
    tables = []
    for topic in (t for t in claims.TOPICS if any(c.topic == t for c in shown)):
        rows = [f"| {head['id']} | {head['claim']} | {head['verdict']} |", "|---:|---|---|"]
        for c in (c for c in shown if c.topic == topic):
            r = results_by_id.get(c.id)
            verdict = badge(r.verdict) if r else words["summary_pending"]
            target = anchor(c) if topic in open_topics else f"topic-{topic}"
            rows.append(f"| [{c.id}](#{target}) | {words['claims'][c.key]['short']} | {verdict} |")
        tables.append(f"**{words['topics'][topic]}**\n\n" + "\n".join(rows))
    return " ".join(tally), tuple(tables)


@memoised
def lesson(verdict: str, topic: str, measured_ids: tuple[int, ...], opened: tuple[str, ...] = ()) -> Lesson:
    """The page for one filter state, given which claims are measured (their results are shared: `measured`) and,
    when every topic is shown, which topics' cards the reader opened (`opened`; one picked topic is always open).
    ConfigError for an unknown verdict or topic (the page's URL parsing never passes one)."""
    words = text.section("claims")
    results_by_id = {i: measured(i) for i in measured_ids}
    selection = claims.select(results_by_id, verdict, topic)
    foldable = topic == claims.ALL
    open_topics = frozenset(opened) if foldable else frozenset(claims.TOPICS)
    tally, overview = _overview(selection.shown, results_by_id, open_topics)
    unplaced = caption(words["pending_hidden"].format(n=len(selection.unplaced))) if selection.unplaced else ""
    sections = []
    for t in claims.TOPICS:
        in_topic = [c for c in selection.shown if c.topic == t]
        if in_topic:
            cards = tuple(card(c, results_by_id.get(c.id)) for c in in_topic) if t in open_topics else ()
            sections.append(Section(t, words["topics"][t], cards, len(in_topic), foldable))
    return Lesson(tally, overview, unplaced, tuple(sections))
