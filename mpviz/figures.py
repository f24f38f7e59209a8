"""Plotly figure builders for every page: plain functions from mpviz result objects to `go.Figure`.

No streamlit here. Colours are fixed per dtype so a dtype looks the same on every page. Labels that a reader
sees are passed in by the page (`labels=`), so the view layer can translate them; defaults are English.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

# One colour per dtype, everywhere in the app (colour-blind-safe Okabe–Ito hues).
DTYPE_COLORS: dict[str, str] = {
    "float64": "#000000",
    "float32": "#0072B2",
    "tf32": "#56B4E9",
    "float16": "#D55E00",
    "bfloat16": "#009E73",
    "float8_e4m3fn": "#CC79A7",
    "float8_e5m2": "#E69F00",
    "float8_e4m3fnuz": "#AA4499",
    "float8_e5m2fnuz": "#DDCC77",
    "float8_e8m0fnu": "#882255",
    "float6_e2m3fn": "#44AA99",
    "float6_e3m2fn": "#117733",
    "float4_e2m1fn": "#332288",
    "int64": "#999999",
    "bool": "#BBBBBB",
}
FALLBACK_COLOR = "#777777"
# Bit-field colours for bit layouts: sign, exponent, mantissa.
FIELD_COLORS = {"sign": "#E15759", "exponent": "#4E79A7", "mantissa": "#59A14F"}
LAYOUT = dict(template="plotly_white", font=dict(size=15), margin=dict(l=10, r=10, t=40, b=10))


def dtype_color(dtype: str | None) -> str:
    return DTYPE_COLORS.get(dtype or "", FALLBACK_COLOR)


def _fig(**layout) -> go.Figure:
    return go.Figure(layout={**LAYOUT, **layout})


# ── attention step-through (spine) ───────────────────────────────────────────────────────────────────────────
# Where each landmark sits in the dataflow diagram: (column, row). Forward on top, its gradients underneath.
DATAFLOW_LAYOUT: dict[str, tuple[float, float]] = {
    "x": (0, 1),
    "x_norm": (1, 1),
    "q": (2, 2),
    "k": (2, 1),
    "v": (2, 0),
    "scores": (3, 1.5),
    "probs": (4, 1.5),
    "context": (5, 1),
    "out": (6, 1),
    "logits": (7, 1),
    "loss": (8, 1),
    "grad_q": (1.6, -1.2),
    "grad_k": (1.6, -2.2),
    "grad_v": (1.6, -3.2),
    "grad_scores": (3, -1.7),
    "grad_probs": (4.4, -1.7),
}
DATAFLOW_EDGES = (
    ("x", "x_norm"),
    ("x_norm", "q"),
    ("x_norm", "k"),
    ("x_norm", "v"),
    ("q", "scores"),
    ("k", "scores"),
    ("scores", "probs"),
    ("probs", "context"),
    ("v", "context"),
    ("context", "out"),
    ("x", "out"),
    ("out", "logits"),
    ("logits", "loss"),
    ("grad_probs", "grad_scores"),
    ("grad_scores", "grad_q"),
    ("grad_scores", "grad_k"),
    ("grad_probs", "grad_v"),
)


def dataflow_figure(dtypes: dict[str, str], current: str | None = None, title: str = "") -> go.Figure:
    """The layer as a graph of its landmark tensors, each box filled with its dtype's colour.

    `dtypes` maps landmark → dtype of the tensor the trace measured; landmarks missing from it (e.g. scores and
    probs under fused SDPA) are drawn hollow. `current` gets a thick outline.
    """
    fig = _fig(title=title, height=360, showlegend=False)
    arrow = dict(
        xref="x",
        yref="y",
        axref="x",
        ayref="y",
        text="",
        showarrow=True,
        arrowhead=2,
        arrowwidth=1.2,
        arrowcolor="#aaaaaa",
        standoff=18,
        startstandoff=18,
    )
    fig.update_layout(  # one layout update: adding 17 annotations one by one costs ~40 ms per page run
        annotations=[
            dict(
                arrow,
                x=DATAFLOW_LAYOUT[b][0],
                y=DATAFLOW_LAYOUT[b][1],
                ax=DATAFLOW_LAYOUT[a][0],
                ay=DATAFLOW_LAYOUT[a][1],
            )
            for a, b in DATAFLOW_EDGES
        ]
    )
    names = list(DATAFLOW_LAYOUT)
    xs, ys = zip(*(DATAFLOW_LAYOUT[n] for n in names), strict=True)
    fills = [dtype_color(dtypes[n]) if n in dtypes else "white" for n in names]
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=ys,
            mode="markers+text",
            text=names,
            textfont=dict(size=14),
            showlegend=False,
            textposition=["middle left" if n in ("grad_q", "grad_k", "grad_v") else "top center" for n in names],
            customdata=[dtypes.get(n, "—") for n in names],
            hovertemplate="%{text}: %{customdata}<extra></extra>",
            marker=dict(
                size=[34 if n == current else 24 for n in names],
                color=fills,
                symbol="square",
                line=dict(
                    width=[5 if n == current else 1.5 for n in names],
                    color=["#111111" if n == current else "#666666" for n in names],
                ),
            ),
        )
    )
    for dt in sorted(set(dtypes.values())):  # legend: one entry per dtype present
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                name=dt,
                showlegend=True,
                marker=dict(size=14, color=dtype_color(dt), symbol="square"),
            )
        )
    fig.update_layout(showlegend=True, legend=dict(orientation="h", y=-0.05))
    fig.update_xaxes(visible=False, range=[-0.6, 8.6])
    fig.update_yaxes(visible=False, range=[-3.8, 2.8])
    return fig


def exponent_histogram_figure(
    hist: tuple[tuple[int, int], ...], dtype: str, ranges: list, labels: dict | None = None
) -> go.Figure:
    """Counts of floor(log2|x|) as bars, above strips that show each format's zones on the same exponent axis.

    `ranges` are `mpviz.stats.FormatRange`s: per format, exponents below its underflow point round to zero,
    then subnormal, normal, and from its overflow point on ±inf (or saturation). The axis spans the data and the
    first (narrowest) format's zones; wider formats' zones run off the edges, which is the point.
    """
    lab = {
        "count": "elements",
        "exponent": "binary exponent  ⌊log₂|x|⌋",
        "underflow": "→ 0",
        "subnormal": "subnormal",
        "normal": "normal",
        "overflow": "→ inf",
        **(labels or {}),
    }
    n = len(ranges)
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.72, 0.28], vertical_spacing=0.04)
    exps = [e for e, _ in hist]
    lo = min([*exps, math.floor(math.log2(ranges[0].underflow_at))]) - 3
    hi = max([*exps, math.ceil(math.log2(ranges[0].overflow_at))]) + 3
    fig.add_trace(
        go.Bar(
            x=exps,
            y=[c for _, c in hist],
            marker_color=dtype_color(dtype),
            name=dtype,
            hovertemplate="2^%{x}: %{y}<extra></extra>",
        ),
        row=1,
        col=1,
    )
    zone_colors = {"underflow": "#bbbbbb", "subnormal": "#f2c14e", "normal": "#8fd694", "overflow": "#e76f51"}
    for i, r in enumerate(ranges):
        edges = [lo, math.log2(r.underflow_at), math.log2(r.smallest_normal), math.log2(r.overflow_at), hi]
        for (zone, color), x0, x1 in zip(zone_colors.items(), edges, edges[1:], strict=False):
            fig.add_trace(
                go.Bar(
                    x=[x1 - x0],
                    base=[x0],
                    y=[r.dtype],
                    orientation="h",
                    marker_color=color,
                    name=lab[zone],
                    showlegend=i == 0,
                    hovertemplate=f"{r.dtype} {lab[zone]}: 2^{x0:.1f} … 2^{x1:.1f}<extra></extra>",
                ),
                row=2,
                col=1,
            )
    fig.update_layout(
        **LAYOUT, height=380 + 24 * n, barmode="overlay", bargap=0.05, legend=dict(orientation="h", y=1.08)
    )
    fig.update_yaxes(title_text=lab["count"], row=1, col=1)
    fig.update_xaxes(title_text=lab["exponent"], range=[lo, hi], row=2, col=1)
    return fig


def heatmap_figure(matrix, title: str = "", colorbar: str = "", selected: tuple[int, int] | None = None) -> go.Figure:
    """A matrix as a heatmap, plus an invisible scatter over the cell centres so a click selects a cell.

    (Streamlit returns empty selections for go.Heatmap; a selected scatter point has x = column, y = row.)
    """
    m = np.asarray(matrix, dtype=np.float32)
    rows, cols = np.meshgrid(np.arange(m.shape[0]), np.arange(m.shape[1]), indexing="ij")
    fig = _fig(title=title, height=min(640, 160 + 12 * m.shape[0]))
    fig.add_trace(go.Heatmap(z=m, colorscale="Viridis", colorbar=dict(title=colorbar), hoverinfo="skip"))
    fig.add_trace(
        go.Scatter(
            x=cols.ravel(),
            y=rows.ravel(),
            mode="markers",
            marker=dict(opacity=0, size=max(6, 360 // max(m.shape))),  # about one cell wide
            text=[f"{v:.4g}" for v in m.ravel()],
            hovertemplate="row %{y}, col %{x}: %{text}<extra></extra>",
            showlegend=False,
        )
    )
    fig.update_yaxes(autorange="reversed", title="query row")
    fig.update_xaxes(title="key column")
    if selected is not None:  # (row, col) outlined
        r, c = selected
        fig.add_shape(type="rect", x0=c - 0.5, x1=c + 0.5, y0=r - 0.5, y1=r + 0.5, line=dict(color="#E15759", width=3))
    fig.update_layout(clickmode="event+select", hovermode="closest")
    return fig


def reference_error_figure(errors: dict, current: str | None = None, title: str = "") -> go.Figure:
    """Relative error vs the float64 run per landmark, as horizontal bars on a log axis; current one dark."""
    names = list(errors)[::-1]  # first landmark on top
    vals = [max(errors[n].rel, 1e-12) for n in names]
    fig = _fig(title=title, height=140 + 22 * len(names))
    fig.add_trace(
        go.Bar(
            y=names,
            x=vals,
            orientation="h",
            customdata=[errors[n].max_abs for n in names],
            marker_color=["#111111" if n == current else "#4E79A7" for n in names],
            hovertemplate="%{y}<br>max rel %{x:.3g}<br>max abs %{customdata:.3g}<extra></extra>",
        )
    )
    fig.update_xaxes(type="log", title="max |a − ref| / max |ref|")
    fig.update_yaxes(tickfont=dict(size=12))
    return fig


# ── autocast policy (issue 3) ────────────────────────────────────────────────────────────────────────────────
POLICY_LABELS = {"count": "ops", "category": "category"}


def category_color(category: str, low_dtype: str = "float16") -> str:
    """A category in the colour of the dtype it computes in: low precision, float32, or neutral/alarm."""
    if category == "lower_precision_fp":
        return dtype_color(low_dtype)
    if category.startswith("fp32"):
        return dtype_color("float32")
    return FIELD_COLORS["sign"] if category == "banned" else FALLBACK_COLOR


def policy_counts_figure(
    counts: dict[str, dict[str, int]],
    category_names: dict[str, str],
    low_dtypes: dict[str, str] | None = None,
    labels: dict | None = None,
) -> go.Figure:
    """Ops per autocast category, one group of bars per category and one bar per device.

    `counts` maps device label → category → count (as `DevicePolicy.counts()`); `category_names` maps
    category → the name shown; `low_dtypes` maps device label → its autocast dtype, which colours that
    device's lower_precision_fp bar. Bars carry their count; devices differ by hatching.
    """
    labels = {**POLICY_LABELS, **(labels or {})}
    fig = _fig(height=360, barmode="group", legend=dict(orientation="h", y=1.12))
    cats = list(category_names)
    for n, (device, by_cat) in enumerate(counts.items()):
        low = (low_dtypes or {}).get(device, "float16")
        fig.add_bar(
            name=device,
            x=[category_names[c] for c in cats],
            y=[by_cat.get(c, 0) for c in cats],
            text=[by_cat.get(c, 0) for c in cats],
            textposition="outside",
            marker=dict(
                color=[category_color(c, low) for c in cats],
                pattern_shape=["", "/", "x", "."][n % 4],
                line=dict(color="#333333", width=1),
            ),
        )
    fig.update_yaxes(title=labels["count"])
    fig.update_xaxes(title=labels["category"])
    return fig


def call_steps_figure(steps: list, title: str = "") -> go.Figure:
    """The ATen ops one probed call ran (`CallProbe.steps`), left to right, each coloured by its output dtype.

    Casts are diamonds, compute ops squares. Each is labelled with its op and output dtype (labels alternate
    above and below so long names do not collide); the hover shows the input dtypes too.
    """
    fig = _fig(title=title, height=210, showlegend=False, margin=dict(l=10, r=10, t=30, b=10))
    for i, s in enumerate(steps):
        short = s.op.removeprefix("aten.").rsplit(".", 1)[0]
        outs = ", ".join(s.outputs) or "—"
        fig.add_scatter(
            x=[i],
            y=[0],
            mode="markers+text",
            marker=dict(
                size=30,
                color=dtype_color(s.outputs[0] if s.outputs else None),
                symbol="diamond" if s.is_cast else "square",
            ),
            text=[f"{short}<br>→ {outs}"],
            textposition="bottom center" if i % 2 == 0 else "top center",
            hovertext=f"{s.op}<br>{', '.join(s.inputs) or '—'} → {outs}",
            hoverinfo="text",
        )
    fig.update_xaxes(visible=False, range=[-0.8, max(len(steps), 1) - 0.2])
    fig.update_yaxes(visible=False, range=[-1.3, 1.3])
    return fig


# ── number formats (issue 4) ─────────────────────────────────────────────────────────────────────────────────
BITS_LABELS = {
    "sign": "sign",
    "exponent": "exponent",
    "mantissa": "mantissa",
    "title": "{format}: {value}  ({cls})",
    "bit": "bit",
}


def bit_layout_figure(enc, labels: dict | None = None) -> go.Figure:
    """One box per bit of a `mpviz.formats.Encoding`, MSB left, coloured by field (1 = solid, 0 = pale).

    The decoded value is in the title. An invisible marker sits on each box with customdata = bit position
    (0 = least significant), so `st.plotly_chart(..., on_select="rerun")` can report which bit was clicked.
    """
    lab = {**BITS_LABELS, **(labels or {})}
    n = len(enc.bits)
    widths = (
        ("sign", len(enc.bits) - len(enc.exponent_bits) - len(enc.mantissa)),
        ("exponent", len(enc.exponent_bits)),
        ("mantissa", len(enc.mantissa)),
    )
    field_of = [name for name, w in widths for _ in range(w)]  # per box, MSB first
    font = 18 if n <= 16 else 13 if n <= 32 else 9
    fig = _fig(
        title=lab["title"].format(format=enc.format, value=repr(enc.value), cls=enc.cls),
        height=150,
        showlegend=False,
        xaxis=dict(visible=False, range=[-0.6, n - 0.4], fixedrange=True),
        yaxis=dict(visible=False, range=[-0.15, 1.65], fixedrange=True),
        margin=dict(l=10, r=10, t=45, b=5),
    )
    for i, (bit, field) in enumerate(zip(enc.bits, field_of, strict=True)):
        color = FIELD_COLORS[field]
        fig.add_shape(
            type="rect",
            x0=i - 0.46,
            x1=i + 0.46,
            y0=0,
            y1=1,
            line=dict(color=color, width=2),
            fillcolor=color,
            opacity=1.0 if bit == "1" else 0.18,
        )
        fig.add_annotation(
            x=i,
            y=0.5,
            text=bit,
            showarrow=False,
            font=dict(size=font, color="white" if bit == "1" else "#222222"),
        )
    start = 0
    for name, w in widths:
        if w:
            fig.add_annotation(
                x=start + (w - 1) / 2,
                y=1.3,
                text=lab[name],
                showarrow=False,
                font=dict(color=FIELD_COLORS[name], size=14),
            )
        start += w
    positions = list(range(n - 1, -1, -1))
    fig.add_trace(
        go.Scatter(
            x=list(range(n)),
            y=[0.5] * n,
            mode="markers",
            marker=dict(size=22, symbol="square", opacity=0),
            customdata=positions,
            hovertemplate=f"{lab['bit']} %{{customdata}}<extra></extra>",
        )
    )
    return fig


FORMAT_LABELS = {
    "value": "value",
    "number_line_title": "Representable values and their round-to-nearest bins",
    "too_dense": "{count:,} values here: too dense to draw",
    "outside": "no finite value of this format lies here",
    "range_title": "Range of each format (log2 scale)",
    "subnormal": "subnormal",
    "normal": "normal",
    "max": "max",
    "log2": "log2 |x|",
    "hist_title": "Exponents of {name}: how many elements have |x| in [2^e, 2^(e+1))",
    "count": "elements",
}


def _pale(color: str, alpha: float) -> str:
    r, g, b = (int(color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def number_line_figure(
    lines, lo: float, hi: float, value: float | None = None, labels: dict | None = None
) -> go.Figure:
    """Stacked number lines over [lo, hi] (one row per `mpviz.formats.NumberLine`, first on top): alternating
    shaded bars are the round-to-nearest bins, ticks the representable values; a dashed line marks `value`."""
    lab = {**FORMAT_LABELS, **(labels or {})}
    rows = [line.format for line in lines]
    fig = _fig(
        title=lab["number_line_title"],
        height=110 + 60 * len(lines),
        showlegend=False,
        barmode="overlay",
        yaxis=dict(autorange="reversed", categoryorder="array", categoryarray=rows),
        xaxis=dict(range=[lo, hi], exponentformat="power"),
    )
    for line in lines:
        color = dtype_color(line.format)
        if line.complete and line.edges is not None and len(line.values):
            left, right = line.edges[:-1], line.edges[1:]
            shade = [_pale(color, 0.35 if i % 2 else 0.15) for i in range(len(left))]
            fig.add_trace(
                go.Bar(
                    y=[line.format] * len(left),
                    x=right - left,
                    base=left,
                    orientation="h",
                    marker_color=shade,
                    width=0.6,
                    hovertemplate="[%{base:.9g}, %{x:.3g} wide]<extra></extra>",
                )
            )
        if not line.count:
            fig.add_annotation(x=(lo + hi) / 2, y=line.format, showarrow=False, font=dict(size=13), text=lab["outside"])
        elif line.complete:
            fig.add_trace(
                go.Scatter(
                    x=line.values,
                    y=[line.format] * len(line.values),
                    mode="markers",
                    marker=dict(symbol="line-ns-open", size=22, color=color, line=dict(width=2, color=color)),
                    hovertemplate="%{x:.17g}<extra>" + line.format + "</extra>",
                )
            )
        else:  # a pale band: the values are closer together than pixels
            fig.add_trace(
                go.Bar(
                    y=[line.format],
                    x=[line.hi - line.lo],
                    base=[line.lo],
                    orientation="h",
                    width=0.6,
                    marker_color=_pale(color, 0.25),
                    hoverinfo="skip",
                )
            )
            fig.add_annotation(
                x=(line.lo + line.hi) / 2,
                y=line.format,
                showarrow=False,
                font=dict(size=13),
                text=lab["too_dense"].format(count=line.count),
            )
    if value is not None and lo <= value <= hi:
        fig.add_vline(x=value, line=dict(color="#333333", dash="dash"), annotation_text=lab["value"])
    return fig


def _range_rows(fig: go.Figure, specs, yaxis: str, lab: dict) -> None:
    """Subnormal (pale) and normal (solid) log2 ranges of each spec as horizontal bars, max marked."""
    for spec in specs:
        color = dtype_color(spec.name)
        lo_sub, lo_norm, hi = (
            math.log2(spec.smallest_subnormal),
            math.log2(spec.smallest_normal),
            math.log2(spec.max),
        )
        if spec.has_subnormals:
            fig.add_trace(
                go.Bar(
                    y=[spec.name],
                    x=[lo_norm - lo_sub],
                    base=[lo_sub],
                    orientation="h",
                    yaxis=yaxis,
                    showlegend=False,
                    marker_color=_pale(color, 0.3),
                    width=0.55,
                    hovertemplate=f"{lab['subnormal']}: 2^{lo_sub:g} … 2^{lo_norm:g}<extra>{spec.name}</extra>",
                )
            )
        fig.add_trace(
            go.Bar(
                y=[spec.name],
                x=[hi - lo_norm],
                base=[lo_norm],
                orientation="h",
                yaxis=yaxis,
                marker_color=color,
                width=0.55,
                showlegend=False,
                hovertemplate=f"{lab['normal']}: 2^{lo_norm:g} … 2^{hi:.4f}<extra>{spec.name}</extra>",
            )
        )
        fig.add_trace(
            go.Scatter(
                x=[hi],
                y=[spec.name],
                yaxis=yaxis,
                mode="markers",
                marker=dict(symbol="x", size=12, color="#222222"),
                showlegend=False,
                hovertemplate=f"{lab['max']} = {spec.max:.6g}<extra>{spec.name}</extra>",
            )
        )


def range_figure(specs, markers: dict[str, float] | None = None, labels: dict | None = None) -> go.Figure:
    """Each `FormatSpec`'s subnormal and normal range on a log2 axis (max marked ×), with labelled vertical
    lines at log2|x| of every finite non-zero marker (the current value, a tensor's extremes …)."""
    lab = {**FORMAT_LABELS, **(labels or {})}
    names = [s.name for s in specs]
    fig = _fig(
        title=lab["range_title"],
        height=110 + 45 * len(specs),
        showlegend=False,
        barmode="overlay",
        xaxis=dict(title=lab["log2"]),
        yaxis=dict(autorange="reversed", categoryorder="array", categoryarray=names),
    )
    _range_rows(fig, specs, "y", lab)
    dashes = ("dash", "dot", "dashdot", "longdash")
    for i, (name, x) in enumerate((markers or {}).items()):
        if x and math.isfinite(x):  # a vertical line across all rows, named in the legend
            fig.add_trace(
                go.Scatter(
                    x=[math.log2(abs(x))] * 2,
                    y=[names[0], names[-1]],
                    mode="lines",
                    name=f"{name}: {x:.4g}",
                    line=dict(color="#333333", dash=dashes[i % len(dashes)], width=2),
                    showlegend=True,
                )
            )
    fig.update_layout(showlegend=True, legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0))
    return fig


def format_exponent_figure(name: str, log2_hist, specs, labels: dict | None = None) -> go.Figure:
    """Top: counts of a tensor's elements per floor(log2|x|) (`TensorStats.log2_hist`). Bottom, same x axis:
    each spec's subnormal / normal range, so what falls outside a format's range is read off directly."""
    lab = {**FORMAT_LABELS, **(labels or {})}
    exps = [e for e, _ in log2_hist]
    counts = [c for _, c in log2_hist]
    fig = _fig(
        title=lab["hist_title"].format(name=name),
        height=260 + 45 * len(specs),
        showlegend=False,
        barmode="overlay",
        xaxis=dict(title=lab["log2"], anchor="y2"),
        yaxis=dict(domain=[0.45, 1.0], title=lab["count"]),
        yaxis2=dict(
            domain=[0.0, 0.36],
            autorange="reversed",
            categoryorder="array",
            categoryarray=[s.name for s in specs],
        ),
    )
    fig.add_trace(
        go.Bar(
            x=[e + 0.5 for e in exps],
            y=counts,
            width=1.0,
            marker_color="#555555",
            hovertemplate="[2^%{customdata}, 2^(%{customdata}+1)): %{y}<extra></extra>",
            customdata=exps,
        )
    )
    _range_rows(fig, specs, "y2", lab)
    # Show the histogram and every range no wider than 2^64 whole; wider ones (bfloat16) run off the edges.
    narrow = [s for s in specs if math.log2(s.max / s.smallest_subnormal) <= 64] or list(specs)
    lo = min([*exps, *(math.log2(s.smallest_subnormal) for s in narrow)]) - 2
    hi = max([e + 1 for e in exps] + [math.log2(s.max) for s in narrow]) + 2
    fig.update_xaxes(range=[lo, hi])
    return fig


# ── softmax overflow (issue 5) ───────────────────────────────────────────────────────────────────────────────
SOFTMAX_LABELS = {
    "bars_title": "Probabilities per format and method (float64 as the line)",
    "index": "logit index",
    "prob": "probability",
    "reference": "float64",
    "nonfinite": "nan/inf",
    "sweep_title": "Error vs logit scale",
    "scale": "largest |logit| (log)",
    "error": "error vs float64 (log)",
    "failed": "nan/inf",
    "overflow_line": "{dtype}: exp overflows",
    "exp_title": "exp(x) in each format",
    "x": "x",
    "exp": "exp(x) (log)",
    "max_line": "{dtype} max",
    "overflow_point": "{dtype}: exp(x) = inf from x = {x}",
    "underflow_point": "{dtype}: exp(x) = 0 from x = {x}",
    "methods": {
        "naive": "naive",
        "stable": "max-subtracted",
        "torch": "torch.softmax",
        "upcast": "fp32 upcast",
    },
}
# Methods keep their format's colour and differ by bar pattern / line dash.
SOFTMAX_PATTERNS = {"naive": "/", "stable": "", "torch": ".", "upcast": "x"}
SOFTMAX_DASHES = {"naive": "dot", "stable": "solid", "torch": "dash", "upcast": "dashdot"}


def _softmax_plottable(values, positive: bool = False) -> list:
    """Plotly gaps for values a (log) axis cannot show: nan, ±inf and, with positive=True, values ≤ 0."""
    return [v if v == v and abs(v) != float("inf") and (v > 0 or not positive) else None for v in values]


def softmax_bars(comparison, max_bars: int = 48, log_y: bool = False, labels: dict | None = None) -> go.Figure:
    """One panel per format: grouped bars per method, float64 as black dashes, ✕ where an output is nan/inf.

    `comparison` is a `mpviz.softmax.Comparison`. Rows longer than `max_bars` show the `max_bars` entries with
    the largest float64 probability (in index order). With `log_y` a probability flushed to 0 has no bar.
    """
    lab = {**SOFTMAX_LABELS, **(labels or {})}
    ref = comparison.reference
    keep = sorted(sorted(range(len(ref)), key=lambda i: -ref[i])[:max_bars])
    x = [str(i) for i in keep]
    formats = list(dict.fromkeys(v.format for v in comparison.variants))
    fig = _fig(title=lab["bars_title"], height=230 * len(formats) + 130, barmode="group", bargap=0.25)
    fig.set_subplots(rows=len(formats), cols=1, shared_xaxes=True, vertical_spacing=0.06, subplot_titles=formats)
    for row, fmt in enumerate(formats, start=1):
        for v in (v for v in comparison.variants if v.format == fmt):
            p = [v.probs[i] for i in keep]
            fig.add_trace(
                go.Bar(
                    x=x,
                    y=_softmax_plottable(p, positive=log_y),
                    name=lab["methods"].get(v.method, v.method),
                    legendgroup=v.method,
                    showlegend=row == 1,
                    marker=dict(color=dtype_color(fmt), pattern_shape=SOFTMAX_PATTERNS.get(v.method, "")),
                    hovertemplate=f"{v.method} · {fmt}<br>%{{x}}: %{{y:.6g}}<extra></extra>",
                ),
                row=row,
                col=1,
            )
            bad = [(xi, pi) for xi, pi in zip(x, p, strict=True) if pi != pi or abs(pi) == float("inf")]
            if bad:
                fig.add_trace(
                    go.Scatter(
                        x=[b[0] for b in bad],
                        y=[max(ref)] * len(bad),
                        mode="markers",
                        marker=dict(symbol="x", size=14, color=dtype_color(fmt)),
                        name=lab["nonfinite"],
                        legendgroup="nonfinite",
                        showlegend=False,
                        text=[str(b[1]) for b in bad],
                        hovertemplate=f"{v.method} · {fmt}<br>%{{x}}: %{{text}}<extra></extra>",
                    ),
                    row=row,
                    col=1,
                )
        fig.add_trace(
            go.Scatter(
                x=x,
                y=[ref[i] for i in keep],
                mode="markers",
                marker=dict(symbol="line-ew", size=26, line=dict(width=3, color=dtype_color("float64"))),
                name=lab["reference"],
                legendgroup="reference",
                showlegend=row == 1,
                hovertemplate="float64<br>%{x}: %{y:.6g}<extra></extra>",
            ),
            row=row,
            col=1,
        )
        fig.update_yaxes(title_text=lab["prob"], type="log" if log_y else "linear", row=row, col=1)
    fig.update_xaxes(type="category", title_text=lab["index"], row=len(formats), col=1)
    fig.update_layout(legend=dict(orientation="h", y=-0.06, yanchor="top", x=0), margin=dict(b=90))
    return fig


def softmax_sweep(sweep, metric: str = "max_rel_error", labels: dict | None = None) -> go.Figure:
    """Error (a `SweepCurve` field: max_abs_error | max_rel_error | kl) vs scale, log–log, one line per
    format × method; ✕ on a line where the output was nan/inf, a dashed vertical where each arithmetic dtype's
    exp overflows for this row (`sweep.overflow_scale`)."""
    lab = {**SOFTMAX_LABELS, **(labels or {})}
    xs = list(sweep.scales)
    values = [v for c in sweep.curves for v in _softmax_plottable(getattr(c, metric), positive=True) if v]
    top = max(values, default=1.0) * 3
    bottom = max(min(values, default=1e-8), 1e-12) / 3  # errors below 1e-12 leave the plot (visual floor)
    fig = _fig(title=lab["sweep_title"], height=560)
    for c in sweep.curves:
        name = f"{c.format} · {lab['methods'].get(c.method, c.method)}"
        color = dtype_color(c.format)
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=_softmax_plottable(getattr(c, metric), positive=True),
                mode="lines",
                name=name,
                legendgroup=name,
                line=dict(color=color, dash=SOFTMAX_DASHES.get(c.method, "solid"), width=2.5),
                hovertemplate=f"{name}<br>%{{x:.4g}} → %{{y:.3g}}<extra></extra>",
            )
        )
        failed = [x for x, bad in zip(xs, c.nonfinite, strict=True) if bad]
        if failed:
            fig.add_trace(
                go.Scatter(
                    x=failed,
                    y=[top] * len(failed),
                    mode="markers",
                    marker=dict(symbol="x", size=9, color=color),
                    name=f"{name}: {lab['failed']}",
                    legendgroup=name,
                    showlegend=False,
                    hovertemplate=f"{name}<br>%{{x:.4g}}: {lab['failed']}<extra></extra>",
                )
            )
    marks = sorted((x, d) for d, x in sweep.overflow_scale.items() if x is not None and xs[0] <= x <= xs[-1])
    for i, (x, dtype) in enumerate(marks):
        near = [d for x2, d in marks if abs(x2 - x) <= 0.02 * x]  # one label for thresholds that coincide
        label = lab["overflow_line"].format(dtype=", ".join(near))
        fig.add_trace(
            go.Scatter(
                x=[x, x],
                y=[bottom, top],
                mode="lines+text",
                line=dict(color=dtype_color(dtype), dash="dash", width=2),
                text=[label if near[0] == dtype else "", ""],
                textposition="top left" if i % 2 == 0 else "top right",
                textfont=dict(color=dtype_color(dtype)),
                showlegend=False,
                hovertemplate=f"{label}: %{{x:.4g}}<extra></extra>",
            )
        )
    fig.update_xaxes(type="log", title=lab["scale"])
    fig.update_yaxes(type="log", title=lab["error"], exponentformat="power")
    return fig


def softmax_exp(curves, labels: dict | None = None) -> go.Figure:
    """exp(x) per dtype on a log axis (`mpviz.softmax.exp_curves`), each dtype's max as a dotted horizontal
    line, ✕ where exp first gives inf (on the max line), ○ where it first gives 0 (at its smallest value).

    The curves coincide where finite, so wider-range dtypes are drawn first and thicker: each shows as a band
    around the narrower ones, ending where its own exp overflows or flushes to zero.
    """
    lab = {**SOFTMAX_LABELS, **(labels or {})}
    fig = _fig(title=lab["exp_title"], height=520)
    lo, hi = curves[0].x[0], curves[0].x[-1]
    spans = sorted(curves[1:], key=lambda c: c.thresholds.underflow_from - c.thresholds.overflow_from)
    for i, c in enumerate([*spans, curves[0]]):
        color = dtype_color(c.dtype)
        truth = c.dtype == "float64"
        width = 1.5 if truth else 3 + 4 * (len(spans) - 1 - i)
        fig.add_trace(
            go.Scatter(
                x=list(c.x),
                y=_softmax_plottable(c.y, positive=True),
                mode="lines",
                name=c.dtype,
                line=dict(color=color, width=width, dash="dot" if truth else "solid"),
                hovertemplate=f"{c.dtype}: exp(%{{x:.6g}}) = %{{y:.4g}}<extra></extra>",
            )
        )
        if truth:
            continue
        t = c.thresholds
        fig.add_trace(
            go.Scatter(
                x=[lo, hi],
                y=[t.max, t.max],
                mode="lines+text",
                line=dict(color=color, dash="dot", width=1.5),
                text=[lab["max_line"].format(dtype=c.dtype), ""][:: 1 if i % 2 == 0 else -1],
                textposition="top right" if i % 2 == 0 else "top left",
                textfont=dict(color=color),
                showlegend=False,
                hoverinfo="skip",
            )
        )
        smallest = min((y for y in c.y if y > 0), default=t.max)
        over = lab["overflow_point"].format(dtype=c.dtype, x=f"{t.overflow_from:.8g}")
        under = lab["underflow_point"].format(dtype=c.dtype, x=f"{t.underflow_from:.8g}")
        fig.add_trace(
            go.Scatter(
                x=[t.overflow_from, t.underflow_from],
                y=[t.max, smallest],
                mode="markers",
                marker=dict(symbol=["x", "circle-open"], size=16, color=color, line=dict(width=3, color=color)),
                text=[over, under],
                showlegend=False,
                hovertemplate="%{text}<extra></extra>",
            )
        )
    fig.update_xaxes(title=lab["x"])
    fig.update_yaxes(type="log", title=lab["exp"], exponentformat="power")
    return fig


# ── GradScaler (issue 6) ─────────────────────────────────────────────────────────────────────────────────────
SCALER_LABELS = {
    "step": "optimizer step",
    "scale": "loss scale (log₂ axis)",
    "scale_line": "scale used",
    "skipped": "step skipped",
    "injected": "inf injected",
    "grow": "growth",
    "backoff": "backoff",
    "loss": "loss (log axis)",
    "loss_line": "loss",
    "zero": "gradient elements lost to zero",
    "with_scaling": "with scaling",
    "without_scaling": "without scaling",
    "exponent": "binary exponent ⌊log₂|g|⌋",
    "count": "gradient elements",
    "before": "gradients (unscaled)",
    "after": "× scale {scale:g}",
    "underflow": "→ 0 in {dtype}",
    "subnormal": "subnormal in {dtype}",
    "overflow": "→ inf in {dtype}",
}
# Zones of a format's range on the exponent axis (histogram backgrounds).
SCALER_ZONE_COLORS = {"underflow": "#bbbbbb", "subnormal": "#f2c14e", "overflow": "#e76f51"}
# Autocast choice → the dtype whose colour draws it.
AUTOCAST_DTYPE_NAMES = {"off": "float32", "fp16": "float16", "bf16": "bfloat16"}


def _finite_or_none(values) -> list:
    """Plotly draws None as a gap; inf/nan would break log axes."""
    return [v if v is not None and math.isfinite(v) else None for v in values]


def _log2_ticks(lo: float, hi: float) -> dict:
    """Tick every power of two from lo to hi (at most ~12 labels), written 2¹⁶ (big enough to read)."""
    a, b = math.floor(math.log2(lo)), math.ceil(math.log2(hi))
    stride = max(1, math.ceil((b - a + 1) / 12))
    ks = range(a, b + 1, stride)
    sup = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
    return dict(type="log", tickvals=[2.0**k for k in ks], ticktext=[f"2{str(k).translate(sup)}" for k in ks])


def _step_axis(title: str, total_steps: int | None) -> dict:
    """The x axis of per-step charts: fixed to the whole run while it streams in, so it doesn't rescale."""
    return dict(title=title, range=[-0.5, total_steps + 0.5]) if total_steps else dict(title=title)


def scale_trace_figure(
    steps, labels: dict | None = None, total_steps: int | None = None, max_annotations: int = 16
) -> go.Figure:
    """GradScaler's scale per step on a log₂ axis: the scale each step ran with, then where update() left it.

    `steps` are `mpviz.scaler.StepRecord`s of a run with a scaler (maybe the first few of `total_steps`).
    Skipped steps get a ✕, injected infs a ★, growth ▲ and backoff ▼ markers sit on the new scale; up to
    `max_annotations` of those carry ×factor text.
    """
    lab = {**SCALER_LABELS, **(labels or {})}
    fig = _fig(height=360, legend=dict(orientation="h", y=1.12))
    if not steps:
        return fig
    xs = [r.step for r in steps] + [steps[-1].step + 1]
    ys = [r.scale_before for r in steps] + [steps[-1].scale_after]
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=ys,
            mode="lines",
            line_shape="hv",
            name=lab["scale_line"],
            line=dict(color=dtype_color("float16"), width=3),
            hovertemplate="step %{x}: %{y:g}<extra></extra>",
        )
    )
    marks = (
        ("skipped", [r for r in steps if r.skipped], "x", "#111111", lambda r: r.scale_before, 0),
        ("injected", [r for r in steps if r.injected], "star", "#CC79A7", lambda r: r.scale_before, 0),
        (
            "grow",
            [r for r in steps if r.scale_change == "grow"],
            "triangle-up",
            "#009E73",
            lambda r: r.scale_after,
            1,
        ),
        (
            "backoff",
            [r for r in steps if r.scale_change == "backoff"],
            "triangle-down",
            "#D55E00",
            lambda r: r.scale_after,
            1,
        ),
    )
    for key, rs, symbol, color, y_of, dx in marks:
        if rs:
            fig.add_trace(
                go.Scatter(
                    x=[r.step + dx for r in rs],
                    y=[y_of(r) for r in rs],
                    mode="markers",
                    name=lab[key],
                    marker=dict(symbol=symbol, size=13, color=color),
                    hovertemplate=f"{lab[key]} · step %{{x}}<extra></extra>",
                )
            )
    events = [r for r in steps if r.scale_change in ("grow", "backoff")]
    if len(events) <= max_annotations:
        for r in events:
            up = r.scale_change == "grow"
            fig.add_annotation(
                x=r.step + 1,
                y=math.log10(r.scale_after),
                showarrow=False,
                text=f"×{r.scale_after / r.scale_before:g}",
                yshift=16 if up else -16,
                font=dict(size=13, color="#333333"),
            )
    finite = [y for y in ys if y and math.isfinite(y)]
    fig.update_yaxes(title=lab["scale"], **_log2_ticks(min(finite), max(finite)))
    fig.update_xaxes(**_step_axis(lab["step"], total_steps and total_steps + 1))
    return fig


def training_loss_figure(steps, labels: dict | None = None, total_steps: int | None = None) -> go.Figure:
    """Loss per step (log axis); skipped steps marked ✕. Non-finite losses leave gaps."""
    lab = {**SCALER_LABELS, **(labels or {})}
    fig = _fig(height=300, showlegend=False)
    fig.add_trace(
        go.Scatter(
            x=[r.step for r in steps],
            y=_finite_or_none(r.loss for r in steps),
            mode="lines",
            name=lab["loss_line"],
            line=dict(color=dtype_color("float32"), width=2),
        )
    )
    skipped = [r for r in steps if r.skipped]
    if skipped:
        fig.add_trace(
            go.Scatter(
                x=[r.step for r in skipped],
                y=_finite_or_none(r.loss for r in skipped),
                mode="markers",
                name=lab["skipped"],
                marker=dict(symbol="x", size=11, color="#111111"),
            )
        )
    fig.update_yaxes(title=lab["loss"], type="log")
    fig.update_xaxes(**_step_axis(lab["step"], total_steps))
    return fig


def zero_fraction_figure(
    steps, labels: dict | None = None, dtype: str = "float16", total_steps: int | None = None
) -> go.Figure:
    """Per step, the share of gradient elements the low-precision backward lost to zero: scaled vs not."""
    lab = {**SCALER_LABELS, **(labels or {})}
    fig = _fig(height=300, legend=dict(orientation="h", y=1.15))
    x = [r.step for r in steps]
    fig.add_trace(
        go.Scatter(
            x=x,
            y=[r.zero_grad_fraction_unscaled for r in steps],
            mode="lines",
            name=lab["without_scaling"],
            line=dict(color="#999999", width=2, dash="dash"),
        )
    )
    fig.add_trace(
        go.Scatter(
            x=x,
            y=[r.zero_grad_fraction for r in steps],
            mode="lines",
            name=lab["with_scaling"],
            line=dict(color=dtype_color(dtype), width=3),
        )
    )
    fig.update_yaxes(title=lab["zero"], tickformat=".2~%", rangemode="tozero")
    fig.update_xaxes(**_step_axis(lab["step"], total_steps))
    return fig


def scaled_gradient_histogram_figure(record, fmt, labels: dict | None = None) -> go.Figure:
    """Exponents of one step's float32 reference gradients, unscaled and × its scale, over `fmt`'s zones.

    `record` is a `StepRecord`, `fmt` a `mpviz.stats.FormatRange` (the autocast dtype's). A bar for exponent e
    spans [e, e+1) — |g| in [2^e, 2^(e+1)) — so the zone edges (log₂ of fmt's underflow point, smallest
    normal and overflow point) sit exactly where values start to flush, lose bits, or overflow.
    """
    lab = {**SCALER_LABELS, **(labels or {})}
    fig = _fig(height=380, barmode="overlay", bargap=0, legend=dict(orientation="h", y=1.15))
    series = [(lab["before"], record.grad_exponents, "#888888")]
    if record.grad_exponents_scaled:
        series.append(
            (
                lab["after"].format(scale=record.scale_before),
                record.grad_exponents_scaled,
                dtype_color(fmt.dtype),
            )
        )
    exps = [e for _, hist, _ in series for e, _ in hist]
    lo = min([*exps, math.floor(math.log2(fmt.underflow_at))]) - 2
    hi = max([*exps, math.ceil(math.log2(fmt.overflow_at))]) + 2
    edges = {
        "underflow": (lo, math.log2(fmt.underflow_at)),
        "subnormal": (math.log2(fmt.underflow_at), math.log2(fmt.smallest_normal)),
        "overflow": (math.log2(fmt.overflow_at), hi),
    }
    for zone, (x0, x1) in edges.items():
        fig.add_vrect(
            x0=x0,
            x1=x1,
            fillcolor=SCALER_ZONE_COLORS[zone],
            opacity=0.35,
            line_width=0,
            layer="below",
            annotation_text=lab[zone].format(dtype=fmt.dtype),
            annotation_position="top left",
            annotation_font_size=12,
        )
    for name, hist, color in series:
        fig.add_trace(
            go.Bar(
                x=[e + 0.5 for e, _ in hist],
                y=[c for _, c in hist],
                width=1.0,
                name=name,
                marker=dict(color=color, line=dict(width=0.5, color="white")),
                opacity=0.75,
                customdata=[e for e, _ in hist],
                hovertemplate="2^%{customdata}: %{y}<extra>" + name + "</extra>",
            )
        )
    fig.update_xaxes(title=lab["exponent"], range=[lo, hi])
    fig.update_yaxes(title=lab["count"])
    return fig


def recipes_loss_figure(results, labels: dict | None = None) -> go.Figure:
    """Loss curves of `mpviz.scaler.RecipeResult`s on one chart, coloured by autocast dtype (dashed: no scaler
    where fp16 would want one). `labels` may rename recipes by their key."""
    lab = {**SCALER_LABELS, **(labels or {})}
    fig = _fig(height=380, legend=dict(orientation="h", y=1.12))
    for r in results:
        dash = "dash" if r.dtype == "fp16" and not r.scaler else "solid"
        fig.add_trace(
            go.Scatter(
                x=list(range(len(r.losses))),
                y=_finite_or_none(r.losses),
                mode="lines",
                name=lab.get(r.recipe, r.recipe),
                line=dict(color=dtype_color(AUTOCAST_DTYPE_NAMES.get(r.dtype)), width=3, dash=dash),
            )
        )
    fig.update_yaxes(title=lab["loss"], type="log")
    fig.update_xaxes(title=lab["step"])
    return fig


# ── tutorial claims ──────────────────────────────────────────────────────────────────────────────────────────
CLAIMS_LABELS = {
    "stored": "{value:g} → {stored:.9g} in {format}",
    "speedup": "speed vs float32 (×, log axis)",
    "matmul": "one {n}×{n} matmul",
    "step": "forward + backward (T={seq}, d={dim})",
    "claimed": "claimed 2–3×",
    "terms": "terms added",
    "partial_sum": "running sum",
    "exact": "exact",
    "low_accumulator": "{dtype} accumulator",
    "rounded_once": "exact, rounded once to {dtype}",
    "measured": "torch.matmul on {device}",
    "lost": "gradient elements lost to zero (mean per step)",
    "recipe": "recipe",
}


def close_scores_figure(lines, pairs, labels: dict | None = None) -> go.Figure:
    """Number lines (`mpviz.formats.NumberLine`s, one per format) with every score of `pairs`
    (`mpviz.claims.ScorePair`s) as a dotted vertical line and a dot where each format stores it."""
    lab = {**FORMAT_LABELS, **CLAIMS_LABELS, **(labels or {})}
    fig = number_line_figure(lines, lines[0].lo, lines[0].hi, labels=lab)
    for pair in pairs:
        for i, score in enumerate(pair.scores):  # the second label of a pair sits higher: close scores
            fig.add_vline(x=score, line=dict(color="#555555", dash="dot", width=1.5))
            fig.add_annotation(
                x=score,
                y=1.0,
                yref="paper",
                yanchor="bottom",
                yshift=18 * i,
                showarrow=False,
                text=f"{score:g}",
                font=dict(size=13),
            )
        for result in pair.formats:
            fig.add_trace(
                go.Scatter(
                    x=list(result.stored),
                    y=[result.format] * 2,
                    mode="markers",
                    marker=dict(size=14, color=dtype_color(result.format), line=dict(width=2, color="white")),
                    hovertext=[
                        lab["stored"].format(value=v, stored=s, format=result.format)
                        for v, s in zip(pair.scores, result.stored, strict=True)
                    ],
                    hoverinfo="text",
                )
            )
    fig.update_layout(margin=dict(l=10, r=10, t=90, b=10))
    return fig


def speed_figure(evidence, labels: dict | None = None) -> go.Figure:
    """Speed of each dtype relative to float32 (`mpviz.claims.SpeedEvidence`): one matmul and one training step,
    on a log axis with 1× marked and the claimed 2–3× band shaded."""
    lab = {**CLAIMS_LABELS, **(labels or {})}
    groups = [
        lab["matmul"].format(n=evidence.matmul_n),
        lab["step"].format(seq=evidence.block.seq_len, dim=evidence.block.d_model),
    ]
    fig = _fig(height=360, barmode="group", legend=dict(orientation="h", y=1.12))
    fig.add_hrect(y0=2, y1=3, fillcolor="#009E73", opacity=0.12, line_width=0, layer="below")
    fig.add_hline(y=1, line=dict(color=dtype_color("float32"), dash="dash"))
    fig.add_annotation(
        x=1,
        xref="paper",
        y=math.log10(3),
        xanchor="right",
        yanchor="bottom",
        showarrow=False,
        text=lab["claimed"],
        font=dict(size=13, color="#333333"),
    )
    for row in evidence.rows:
        speed = [row.matmul_speedup, row.step_speedup]
        fig.add_bar(
            name=row.dtype,
            x=groups,
            y=speed,
            text=[f"{s:.2g}×" for s in speed],
            textposition="outside",
            marker_color=dtype_color(row.dtype),
            hovertext=[f"{row.matmul_ms:.3g} ms", f"{row.step_ms:.3g} ms"],
        )
    values = [s for r in evidence.rows for s in (r.matmul_speedup, r.step_speedup)]
    lo, hi = math.log10(min([*values, 1.0])) - 0.3, math.log10(max([*values, 3.0])) + 0.3
    fig.update_yaxes(title=lab["speedup"], type="log", range=[lo, hi], dtick=1)  # a tick per decade
    return fig


def accumulation_figure(evidence, labels: dict | None = None) -> go.Figure:
    """The designed dot product of `mpviz.claims.AccumulationEvidence`: the exact running sum and a low-precision
    accumulator's, term by term, with the once-rounded exact sum and torch.matmul's answer at the end."""
    lab = {**CLAIMS_LABELS, **(labels or {})}
    fig = _fig(height=340, legend=dict(orientation="h", y=1.15))
    steps = list(range(len(evidence.exact_partial_sums)))
    end = steps[-1]
    fig.add_scatter(
        x=steps,
        y=list(evidence.exact_partial_sums),
        mode="lines",
        name=lab["exact"],
        line=dict(color=dtype_color("float64"), width=2),
    )
    fig.add_scatter(
        x=steps,
        y=list(evidence.low_partial_sums),
        mode="lines",
        name=lab["low_accumulator"].format(dtype=evidence.dtype),
        line=dict(color=dtype_color(evidence.dtype), width=3, dash="dash"),
    )
    fig.add_scatter(
        x=[end],
        y=[evidence.rounded_once],
        mode="markers",
        name=lab["rounded_once"].format(dtype=evidence.dtype),
        marker=dict(symbol="circle-open", size=22, line=dict(width=3, color=dtype_color("float32"))),
    )
    fig.add_scatter(
        x=[end],
        y=[evidence.measured],
        mode="markers",
        name=lab["measured"].format(device=evidence.device),
        marker=dict(symbol="diamond", size=12, color="#111111"),
    )
    fig.update_xaxes(title=lab["terms"])
    fig.update_yaxes(title=lab["partial_sum"])
    return fig


def lost_gradients_figure(recipes, names: dict[str, str] | None = None, labels: dict | None = None) -> go.Figure:
    """Mean share of gradient elements each `mpviz.scaler.RecipeResult` lost to zero, one bar per recipe
    coloured by its autocast dtype (hatched: fp16 without a scaler). `names` renames recipes by key."""
    lab = {**CLAIMS_LABELS, **(labels or {})}
    fig = _fig(height=320, showlegend=False)
    fig.add_bar(
        x=[(names or {}).get(r.recipe, r.recipe) for r in recipes],
        y=[r.mean_zero_grad_fraction for r in recipes],
        text=[f"{r.mean_zero_grad_fraction:.3%}" for r in recipes],
        textposition="outside",
        marker=dict(
            color=[dtype_color(AUTOCAST_DTYPE_NAMES.get(r.dtype)) for r in recipes],
            pattern_shape=["/" if r.dtype == "fp16" and not r.scaler else "" for r in recipes],
        ),
    )
    top = max([r.mean_zero_grad_fraction for r in recipes] + [1e-3])
    fig.update_yaxes(title=lab["lost"], tickformat=".1%", range=[0, top * 1.25])
    fig.update_xaxes(title=lab["recipe"])
    return fig
