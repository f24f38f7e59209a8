"""Tutorial claims, checked: each claim from the seed tutorials next to the measurements that confirm, limit or
refute it, part by part. The verdicts come from mpviz.claims; each claim's evidence is drawn by
mpviz.app.claim_evidence; this page holds the overview, the cards and the filters."""

import streamlit as st

from mpviz import claims
from mpviz.app import text
from mpviz.app.claim_evidence import BADGE_COLORS, VIEWS, badge, op_name
from mpviz.app.glossary import term_help
from mpviz.app.page import guarded, page_header, show_warnings
from mpviz.app.serving import results
from mpviz.app.url import UrlParam, dump_bool, parse_bool, parse_choice, seed_from_url, write_url

TEXT = text.section("claims")
FILTERS = (claims.ALL, *claims.VERDICTS)
TOPIC_FILTERS = (claims.ALL, *claims.TOPICS)
PARAMS = [
    UrlParam("verdict", claims.ALL, parse_choice(FILTERS)),
    UrlParam("topic", claims.ALL, parse_choice(TOPIC_FILTERS)),
    UrlParam("slow", False, parse_bool, dump_bool),
]
SUMMARY_ANCHOR = "at-a-glance"
TOPIC_TERMS = {  # the glossary terms each topic's cards use (tooltips on the topic's heading)
    "autocast": ("autocast", "aten_op", "cast", "lower_precision_fp", "fp32", "fp32_set_opt_dtype", "promote"),
    "formats": ("ulp", "binade", "subnormal", "saturation"),
    "training": ("loss_scale", "autograd_node"),
    "code": ("autocast",),
}


def measured(claim: claims.Claim) -> claims.Checked:
    """One claim's check, computed once per process for every session in a worker process; slow checks wait for the
    admission gate."""
    return results.isolated(("claim", claim.id), claim.check, heavy=claim.on_demand)


# ── a card ──────────────────────────────────────────────────────────────────────────────────────────────────
def anchor(claim: claims.Claim) -> str:
    return f"claim-{claim.id}"


def source_lines(claim: claims.Claim) -> str:
    pick = 0 if text.language() == "zh" else 1  # sources are (as the tutorial writes it, in Chinese; English gloss)
    title = claims.SOURCES[claim.seeds[0]][pick]
    # The heading the claim is made under: the zh words quote it as the seed writes it, the en words gloss it
    # (claims registered with a section of their own carry it in the engine instead).
    section = TEXT["claims"][claim.key].get("section") or claim.section[pick]
    line = TEXT["source"].format(title=title, section=section)
    if len(claim.seeds) > 1:
        others = TEXT["list_joiner"].join(f"*{claims.SOURCES[s][pick]}*" for s in claim.seeds[1:])
        line += "  \n" + TEXT["also_in"].format(titles=others)
    return line


def parts_list(parts, words: dict) -> str:
    """A markdown list: ✓ or ✗, then what the part says (its subject filled in)."""
    lines = []
    for part in parts:
        subject = (part.subject or "").replace("\n", "; ")
        subject = op_name(subject) if subject.startswith("aten::") else subject  # "aten::add.Tensor" → "add"
        mark = TEXT["part_holds" if part.holds else "part_fails"]
        lines.append("- " + TEXT["part_line"].format(mark=mark, text=words["parts"][part.code].format(subject=subject)))
    return "\n".join(lines)


def parts_block(checked: claims.Checked, words: dict) -> None:
    """What the claim says, part by part; parts measured per device side by side, each with its verdict."""
    st.markdown(f"**{TEXT['parts_title']}**")
    devices = list(dict.fromkeys(p.device for p in checked.parts))
    if devices == [None]:
        st.markdown(parts_list(checked.parts, words))
        return
    for col, device in zip(st.columns(len(devices)), devices, strict=True):
        head = f"**{TEXT['device_short'][device]}** {badge(checked.device_verdicts[device])}"
        col.markdown(head + "\n\n" + parts_list([p for p in checked.parts if p.device == device], words))


def card(claim: claims.Claim, checked: claims.Checked | None) -> None:
    words = TEXT["claims"][claim.key]
    with st.container(border=True):
        st.subheader(TEXT["card_title"].format(id=claim.id, claim=words["claim"]), anchor=anchor(claim))
        st.caption(source_lines(claim))
        if checked is None:
            st.info(TEXT["pending"].format(slow=TEXT["slow"]))
            return
        st.markdown(badge(checked.verdict))
        if checked.about:
            st.caption(TEXT["about"].format(device=TEXT["labels"]["device_names"][checked.about]))
        if checked.parts:
            parts_block(checked, words)
        VIEWS[claim.key](checked, words)
        st.markdown(TEXT["back"])  # a link from the locale file: markdown, not a caption (captions carry no links)


# ── the overview ────────────────────────────────────────────────────────────────────────────────────────────
def summary(shown: tuple[claims.Claim, ...], measured_results: dict[int, claims.Checked]) -> None:
    """Verdict counts, then one compact table per topic: each claim's number links to its card."""
    st.subheader(TEXT["summary_title"], anchor=SUMMARY_ANCHOR)
    counts = claims.verdict_counts(measured_results.values())
    pending = sum(c.id not in measured_results for c in claims.CLAIMS)
    tally = [TEXT["count"].format(color=BADGE_COLORS[v], label=TEXT["verdicts"][v], n=n) for v, n in counts.items()]
    tally.append(TEXT["count"].format(color="gray", label=TEXT["summary_pending"], n=pending))
    st.markdown(" ".join(tally))  # one line of badges: compact on a phone, readable on a projector
    head = TEXT["summary_cols"]
    topics = [t for t in claims.TOPICS if any(c.topic == t for c in shown)]
    grid = st.columns(2)
    for i, topic in enumerate(topics):
        rows = [f"| {head['id']} | {head['claim']} | {head['verdict']} |", "|---:|---|---|"]
        for c in (c for c in shown if c.topic == topic):
            r = measured_results.get(c.id)
            verdict = badge(r.verdict) if r else TEXT["summary_pending"]
            rows.append(f"| [{c.id}](#{anchor(c)}) | {TEXT['claims'][c.key]['short']} | {verdict} |")
        grid[i % 2].markdown(f"**{TEXT['topics'][topic]}**\n\n" + "\n".join(rows))


# ── the page ────────────────────────────────────────────────────────────────────────────────────────────────
page_header(TEXT)
seed_from_url(PARAMS)
show_warnings()
s = st.session_state
st.segmented_control(TEXT["filter"], FILTERS, key="verdict", format_func=TEXT["filters"].get, required=True)
st.segmented_control(
    TEXT["topic_filter"], TOPIC_FILTERS, key="topic", format_func=TEXT["topic_filters"].get, required=True
)
st.toggle(TEXT["slow"], key="slow")
write_url(PARAMS)

results_by_id: dict[int, claims.Checked] = {}
with st.spinner(TEXT["measuring"]):
    for claim in claims.CLAIMS:
        if not claim.on_demand:
            with guarded(f"claim {claim.id}"):
                results_by_id[claim.id] = measured(claim)
if s.slow:
    for claim in claims.CLAIMS:
        if claim.on_demand:
            with st.spinner(TEXT["measuring_slow"].format(id=claim.id)), guarded(f"claim {claim.id}"):
                results_by_id[claim.id] = measured(claim)

selection = claims.select(results_by_id, s.verdict, s.topic)
with guarded("summary"):
    summary(selection.shown, results_by_id)
if selection.unplaced:
    st.caption(TEXT["pending_hidden"].format(n=len(selection.unplaced)))
if not selection.shown:
    st.info(TEXT["none_shown"])
topic = None
for claim in selection.shown:
    if claim.topic != topic:
        topic = claim.topic
        st.header(TEXT["topics"][topic], anchor=f"topic-{topic}", help=term_help(*TOPIC_TERMS.get(topic, ())) or None)
    with guarded(f"card {claim.id}"):
        card(claim, results_by_id.get(claim.id))
