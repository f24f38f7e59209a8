"""Numbers in a 16-bit format: ranges, what tiny and big values are stored as, close scores, exp's limits."""

from __future__ import annotations

import math

import plotly.graph_objects as go

from mpviz import claims, formats
from mpviz.presentation.claim_evidence.blocks import Block, Columns, Figure, caption, figure
from mpviz.presentation.claim_evidence.dispatch import shows
from mpviz.presentation.claim_evidence.words import (
    lesson_words,
    number_line_labels,
    quoted_match,
    range_labels,
    say,
    table,
    value_class,
)
from mpviz.presentation.figures import claims as claims_fig
from mpviz.presentation.figures import formats as formats_fig


@shows(claims.RangeEvidence)
def range_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    ev: claims.RangeEvidence = c.evidence
    bf, f32 = ev.bfloat16, ev.float32
    low, high = ev.quoted
    fields = dict(
        bf_max=bf.max,
        f32_max=f32.max,
        max_ratio=ev.max_ratio,
        normal=bf.smallest_normal,
        bf_sub=bf.smallest_subnormal,
        f32_sub=f32.smallest_subnormal,
        sub_ratio=ev.subnormal_ratio,
        bf_mant=bf.mantissa_bits,
        f32_mant=f32.mantissa_bits,
        low_text=low.text,
        low_match=quoted_match(low),
        high_text=high.text,
        high_match=quoted_match(high),
    )
    labels = range_labels()
    build = lambda: formats_fig.range_figure([f32, bf, ev.float16], labels=labels)  # noqa: E731
    return say(c, words, fields), figure(f"range_{c.claim}", build)


def storage_table(ev: claims.StorageEvidence) -> list[dict]:
    """One row per value; per format what it is stored as, its kind and relative error."""
    t = lesson_words()
    cols, rows = t["storage_cols"], []
    for i, v in enumerate(ev.values):
        row = {cols["value"]: f"{v:g}"}
        for store in (ev.claimed, ev.contrast):
            e = store.stored[i]
            cell = t["stored_cell" if math.isfinite(e.rel_error) else "stored_cell_exactless"]
            cls = value_class(e.cls)
            row[store.format.name] = cell.format(stored=f"{e.value:.9g}", cls=cls, error=f"{e.rel_error:.2%}")
        rows.append(row)
    return rows


def storage_figure(c: claims.Checked, ev: claims.StorageEvidence) -> Figure:
    t = lesson_words()
    markers = {t["marker"].format(i=i + 1): v for i, v in enumerate(ev.values)}
    labels = {**range_labels(), "range_title": ""}
    build = lambda: formats_fig.range_figure([ev.claimed.format, ev.contrast.format], markers, labels=labels)  # noqa: E731
    return figure(f"storage_{c.claim}", build)


@shows(claims.StorageEvidence)
def storage_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    """Claims 5 and 11: tiny values stored in one 16-bit format, the other beside it."""
    ev: claims.StorageEvidence = c.evidence
    mine, other = ev.claimed, ev.contrast
    fields = dict(
        normal=mine.format.smallest_normal,
        sub=mine.format.smallest_subnormal,
        zero=mine.zero_at_or_below,
        ozero=other.zero_at_or_below,
    )
    if ev.quoted:
        fields |= dict(quoted_text=ev.quoted[0].text, quoted_match=quoted_match(ev.quoted[0]))
    for i, (v, e, o) in enumerate(zip(ev.values, mine.stored, other.stored, strict=True)):
        fields |= {f"v{i}": v, f"s{i}": e.value, f"c{i}": value_class(e.cls), f"e{i}": e.rel_error, f"o{i}": o.value}
    return say(c, words, fields), Columns(((table(storage_table(ev)),), (storage_figure(c, ev),)))


@shows(claims.BigValueEvidence)
def big_value_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    """Claim 21: 70000 (and the tutorial's 1.23456789) in bf16, fp16 beside it."""
    ev: claims.StorageEvidence = c.evidence
    big, example = ev.claimed.stored
    fields = dict(
        f16_big=ev.contrast.stored[0].value,
        f16_max=ev.contrast.format.max,
        bf_big=big.value,
        bf_cls=value_class(big.cls),
        bf_err=big.rel_error,
        bf_ulp=big.ulp,
        bf_ex=example.value,
    )
    return say(c, words, fields), Columns(((table(storage_table(ev)),), (storage_figure(c, ev),)))


def interval(b: formats.RoundingBin, ends: claims.BinEnds) -> str:
    """A bin as an interval: a square bracket where its end is stored as the bin's value, a round one where that
    end (a tie) rounds away to the even neighbour."""
    return lesson_words()["interval"].format(
        open="[" if ends.lo_in else "(", lo=b.lo, hi=b.hi, close="]" if ends.hi_in else ")"
    )


def bin_fields(pair: claims.ScorePair, fmt: str, prefix: str) -> dict:
    t = lesson_words()
    stored, (a, b), (a_ends, b_ends) = pair.on(fmt), pair.bins_in(fmt), pair.ends_in(fmt)
    return {
        "score_a": pair.scores[0],
        "score_b": pair.scores[1],
        "near": round(max(pair.scores)),
        f"{prefix}_gap": stored.spacing,
        f"{prefix}_a": a.stored,
        f"{prefix}_b": b.stored,
        f"{prefix}_a_bin": interval(a, a_ends),
        f"{prefix}_b_bin": interval(b, b_ends),
        f"{prefix}_state": t["distinct"]["kept" if stored.distinct else "merged"],
    }


def pair_figure(c: claims.Checked, pair: claims.ScorePair) -> tuple[Block, ...]:
    t = lesson_words()
    margin = max(r.spacing for r in pair.formats)
    lo, hi = min(pair.scores) - margin, max(pair.scores) + margin

    def build() -> go.Figure:
        lines = [formats.number_line(f.format, lo, hi) for f in pair.formats]
        words = {"labels": t["labels"], "number_line_labels": number_line_labels()}
        return claims_fig.close_scores_figure(lines, [pair], **words)

    return caption(t["labels"]["number_line_title"]), figure(f"scores_{c.claim}", build)


@shows(claims.CloseScoresEvidence)
def close_scores_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    t = lesson_words()
    ev: claims.CloseScoresEvidence = c.evidence
    fields = bin_fields(ev.pair, "float16", "f16") | bin_fields(ev.pair, "bfloat16", "bf16")
    if ev.claimed_value_from:
        source = words["source_found"].format(
            claimed=ev.claimed_value,
            formats=t["and_joiner"].join(dict.fromkeys(f for f, _ in ev.claimed_value_from)),
            scores=t["and_joiner"].join(f"{s:g}" for _, s in ev.claimed_value_from),
        )
    else:
        source = words["source_none"].format(claimed=ev.claimed_value)
    return say(c, words, dict(source=source, **fields)), *pair_figure(c, ev.pair)


@shows(claims.ScorePair)
def merge_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    t = lesson_words()
    pair: claims.ScorePair = c.evidence
    bf16, (bf_a, _), (bf_ends, _) = pair.on("bfloat16"), pair.bins_in("bfloat16"), pair.ends_in("bfloat16")
    fields = bin_fields(pair, "float16", "f16") | dict(
        bf_gap=bf16.spacing,
        bf_bin=interval(bf_a, bf_ends),
        bf_a=bf16.stored[0],
        bf_state=t["distinct"]["kept" if bf16.distinct else "merged"],
        bf_p0=bf16.probs[0],
        bf_p1=bf16.probs[1],
    )
    return say(c, words, fields), *pair_figure(c, pair)


@shows(claims.ExpEvidence)
def exp_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    t = lesson_words()
    ev: claims.ExpEvidence = c.evidence
    f16, bf = ev.on("float16"), ev.on("bfloat16")
    fields = dict(
        f16_over=f16.results[0],
        f16_under=f16.results[1],
        bf_over=bf.results[0],
        bf_under=bf.results[1],
        exact_over=ev.exact[0],
        exact_under=ev.exact[1],
        quoted_text=ev.quoted_max.text,
        quoted_match=quoted_match(ev.quoted_max),
        f16_from=f16.thresholds.overflow_from,
        f16_last=f16.thresholds.largest_finite_input,
        f16_logmax=f16.thresholds.log_max,
        f16_under_from=f16.thresholds.underflow_from,
        bf_from=bf.thresholds.overflow_from,
        bf_under_from=bf.thresholds.underflow_from,
    )
    said = say(c, words, fields)
    cols = t["table_cols"]
    rows = [
        {cols["input"]: f"exp({x:g})", cols["exact"]: f"{e:.6g}"}
        | {f.format: f"{f.results[i]:.6g}" for f in ev.formats}
        for i, (x, e) in enumerate(zip(ev.inputs, ev.exact, strict=True))
    ]
    return said, table(rows)


@shows(claims.RangeSpanEvidence)
def range_span_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    """Claim 40: how many powers of two each format's normal numbers (and its subnormals) span."""
    ev: claims.RangeSpanEvidence = c.evidence
    fields = {}
    for span in ev.spans:
        short = span.format.short
        fields |= {
            f"{short}_normal": span.normal_binades,
            f"{short}_all": span.all_binades,
            f"{short}_max": span.format.max,
        }
    labels = range_labels()
    specs = [s.format for s in ev.spans]
    build = lambda: formats_fig.range_figure(specs, labels=labels)  # noqa: E731
    return say(c, words, fields | dict(share=ev.far_below)), figure(f"range_{c.claim}", build)


@shows(claims.LevelsEvidence)
def levels_view(c: claims.Checked, words: dict) -> tuple[Block, ...]:
    """Claim 41: values per binade, counted over every bit pattern of each format."""
    ev: claims.LevelsEvidence = c.evidence
    fields = {}
    for f in ev.formats:
        short = f.format.short
        fields |= {
            f"{short}_bits": f.format.mantissa_bits,
            f"{short}_levels": f.in_one_to_two,
            f"{short}_lowest": f.in_lowest_normal,
            f"{short}_subnormal": f.in_top_subnormal,
        }
    return (say(c, words, fields),)
