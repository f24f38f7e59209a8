"""Tutorial claims, checked: each claim next to the measurements that confirm, limit or refute it, part by part.

The view model (mpviz.presentation.view_models.claims) builds the overview and every card once per process,
language and filter state; this page holds the filters and draws: a card is an anchored title and a few elements
(its texts are one markdown element), and detail few readers open is built only once its expander is opened. With
every topic shown, a topic's cards are drawn only once its toggle is on (in the URL): a class opening the page gets
the overview and four headings, 28 elements where all cards were 272.
"""

from contextlib import nullcontext

import streamlit as st

from mpviz import claims
from mpviz.app import text
from mpviz.app.glossary import term_help
from mpviz.app.page import Container, chart, guarded, page_header, presenting, show_warnings
from mpviz.app.url import UrlParam, dump_bool, parse_bool, parse_choice, seed_from_url, write_url
from mpviz.presentation.claim_evidence.blocks import Block, Code, Columns, Details, Figure
from mpviz.presentation.view_models import claims as lesson

TEXT = text.section("claims")
PARAMS = [
    UrlParam("verdict", lesson.FILTERS[0], parse_choice(lesson.FILTERS)),
    UrlParam("topic", lesson.TOPIC_FILTERS[0], parse_choice(lesson.TOPIC_FILTERS)),
    UrlParam("slow", False, parse_bool, dump_bool),
    *(UrlParam(f"cards_{t}", False, parse_bool, dump_bool) for t in claims.TOPICS),  # a topic's cards opened
]


def draw(blocks: tuple[Block, ...], where: Container, key: str) -> None:
    """Draw a card's blocks into `where`; `key` makes each folded detail's expander its own."""
    for i, block in enumerate(blocks):
        if isinstance(block, str):
            where.markdown(block)
        elif isinstance(block, Figure):
            chart(block.figure, where=where, key=block.key)
        elif isinstance(block, Code):
            where.code(block.code, language=block.language, wrap_lines=True)
        elif isinstance(block, Columns):
            for col, column in zip(where.columns(block.widths or len(block.columns)), block.columns, strict=True):
                draw(column, col, f"{key}_{i}")
        elif isinstance(block, Details) and not (block.folded or presenting()):
            draw(block.blocks, where.container(), f"{key}_{i}")
        elif isinstance(block, Details):  # built only while open: its figures cost nothing until asked for
            folded = where.expander(block.title, key=f"{key}_{i}", on_change="rerun")
            if folded.open:
                draw(block.blocks, folded, f"{key}_{i}")


def measure(ids: tuple[int, ...]) -> tuple[int, ...]:
    """Measure the claims `ids` (shared: computed once per process), saying so; those that could not be measured
    are left out (each says why)."""
    done = []
    with st.spinner(TEXT["measuring"]):
        for claim_id in ids:
            slow = claims.claim(claim_id).on_demand
            saying = st.spinner(TEXT["measuring_slow"].format(id=claim_id)) if slow else nullcontext()
            with saying, guarded(f"claim {claim_id}"):
                lesson.measured(claim_id)
                done.append(claim_id)
    return tuple(done)


page_header(TEXT)
seed_from_url(PARAMS)
show_warnings()
s = st.session_state
st.segmented_control(TEXT["filter"], lesson.FILTERS, key="verdict", format_func=TEXT["filters"].get, required=True)
st.segmented_control(
    TEXT["topic_filter"], lesson.TOPIC_FILTERS, key="topic", format_func=TEXT["topic_filters"].get, required=True
)
st.toggle(TEXT["slow"], key="slow")
write_url(PARAMS)

ids = lesson.wanted(s.slow)
opened = tuple(t for t in claims.TOPICS if s[f"cards_{t}"])
if not lesson.lesson.cached(s.verdict, s.topic, ids, opened):  # a class on a warm link skips this: no spinner
    ids = measure(ids)
view = lesson.lesson(s.verdict, s.topic, ids, opened)

st.subheader(TEXT["summary_title"], anchor=lesson.SUMMARY_ANCHOR)
st.markdown(view.tally)  # one line of badges: compact on a phone, readable on a projector
grid = st.columns(2)
for i, table in enumerate(view.overview):
    grid[i % 2].markdown(table)
if view.unplaced:
    st.markdown(view.unplaced)
if view.nothing_shown:
    st.info(TEXT["none_shown"])
for section in view.sections:
    st.header(section.heading, anchor=f"topic-{section.topic}", help=term_help(*lesson.TOPIC_TERMS[section.topic]))
    if section.foldable:  # the cards are drawn (and sent) only once opened: a class loads the overview
        st.toggle(TEXT["show_cards"].format(n=section.count), key=f"cards_{section.topic}")
    for card in section.cards:
        with guarded(f"card {card.claim_id}"), st.container(border=True):
            st.subheader(card.title, anchor=card.anchor)
            draw(card.blocks, st, f"card_{card.claim_id}")
            if card.pending:
                st.info(TEXT["pending"].format(slow=TEXT["slow"]))
