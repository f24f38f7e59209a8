"""Commands about the attention block: `policy` (autocast's per-op policy), `trace` (the block op by op) and `bench`."""

from __future__ import annotations

from mpviz.attention import trace_attention
from mpviz.bench import DEFAULT_REPEAT, page_run, run_bench
from mpviz.bundle import lesson_bundle
from mpviz.cli.arguments import add_run_args, run_config
from mpviz.cli.output import out, print_table
from mpviz.kernel_probe import KernelProbe, ensure_safe_kernels, probe_dict
from mpviz.policy import device_policy
from mpviz.serialize import dumps
from mpviz.timing import REPEAT_LIMITS


# ── policy ────────────────────────────────────────────────────────────────────────────────────────────────
def _add_policy(sub) -> None:
    p = sub.add_parser("policy", help="autocast's op categories on a device, probed from the installed torch")
    p.add_argument("--device", default="cpu", help="cpu | cuda (| xpu | mps | mtia where the build has them)")
    p.add_argument("--json", action="store_true")


def _run_policy(args) -> None:
    policy = device_policy(args.device)  # ValueError (exit 2) for a device without a probeable policy
    if args.json:
        out(
            dumps(
                {
                    "device": policy.device,
                    "torch": policy.torch_version,
                    "autocast_dtype": policy.autocast_dtype,
                    "categories": policy.categories,
                    "counts": policy.counts(),
                    "notes": policy.notes,
                    "probe_errors": policy.probe_errors,
                    "fixed_cast_dtype": policy.fixed_cast_dtype,
                }
            )
        )
        return
    rows = [[op, cat, ", ".join(policy.notes.get(op, ()))] for cat, ops in policy.categories.items() for op in ops]
    print_table(rows, ["op", "category", "notes"])
    counts = ", ".join(f"{cat} {n}" for cat, n in policy.counts().items())
    out()
    out(
        f"{policy.device}: {len(policy.ops())} ops ({counts}); torch {policy.torch_version}, "
        f"probed with autocast dtype {policy.autocast_dtype}"
    )


# ── trace ─────────────────────────────────────────────────────────────────────────────────────────────────
def _add_trace(sub) -> None:
    p = sub.add_parser("trace", help="trace the attention block's forward+backward op by op")
    add_run_args(p)
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--bundle",
        action="store_true",
        help="print the lesson bundle the browser lesson shows (JSON, see mpviz.bundle; implies --json)",
    )


def _run_trace(args) -> None:
    cfg = run_config(args)
    if args.bundle:
        out(lesson_bundle(cfg, device=args.device, dtype=args.dtype).to_json())
        return
    result = trace_attention(cfg, device=args.device, dtype=args.dtype)
    t = result.trace
    if args.json:
        out(
            dumps(
                {
                    "config": cfg.to_dict(),
                    "device": result.device,
                    "autocast_dtype": result.autocast_dtype,
                    "events": t.events,
                    "landmarks": t.landmarks,
                    "reference_error": result.reference_error,
                }
            )
        )
        return
    rows = []
    for e in t.events:
        ins = ",".join(i.dtype for i in e.inputs) or "-"
        outs = ",".join(o.dtype for o in e.outputs) or "-"
        rows.append(
            [
                e.index,
                e.phase,
                e.module or "(model)",
                e.op,
                f"{ins} -> {outs}",
                "cast" if e.autocast_cast else "",
                e.landmark or "",
            ]
        )
    print_table(rows, ["#", "phase", "module", "op", "dtypes", "autocast", "landmark"])
    bad = t.first_nonfinite()
    out()
    out(
        f"{len(t.events)} ops, {sum(e.autocast_cast for e in t.events)} autocast casts"
        + (f"; first inf/nan at #{bad.index} ({bad.op})" if bad else "; no inf/nan created")
    )


def kernel_line(probe: KernelProbe) -> str:
    """The kernel probe's outcome in one line (mpviz.kernel_probe)."""
    if probe.crashed_signal is None:
        state = "ok" if probe.ok else f"probe failed ({probe.error})"
        return state + (f" (ONEDNN_MAX_CPU_ISA={probe.user_isa}, set by the user)" if probe.user_isa else "")
    crash = f"the probe crashed with {probe.signal_name} in {probe.crashed_kernel}"
    if probe.user_isa is not None:
        return f"{crash} under the user's ONEDNN_MAX_CPU_ISA={probe.user_isa}; left as set"
    confirmed = "runs under it" if probe.ok else f"still fails under it ({probe.error})"
    return f"{crash}; oneDNN capped at ONEDNN_MAX_CPU_ISA={probe.isa_cap_applied}, which {confirmed}"


# ── bench ─────────────────────────────────────────────────────────────────────────────────────────────────
def _add_bench(sub) -> None:
    p = sub.add_parser("bench", help="time forward+backward traced vs untraced")
    lim = REPEAT_LIMITS
    p.add_argument("--repeat", type=int, default=DEFAULT_REPEAT, help=f"{lim.min_repeat}..{lim.max_repeat}")
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--realsize",
        action="store_true",
        help="instead: mpviz.show on GPT-2-small (with and without reference) and a streamed GPT-2-medium step "
        "(minutes, several GB; needs transformers)",
    )


def _run_bench(args) -> None:
    if args.realsize:
        from mpviz.cli.realsize import run_realsize  # transformers, only here

        result = run_realsize(echo=None if args.json else out)
        if args.json:
            out(dumps(result))
        return
    rows = run_bench(repeat=args.repeat)  # ConfigError (exit 2) for a repeat outside the limits, before any work
    page = page_run()
    kernels = ensure_safe_kernels()
    if args.json:
        out(dumps({"results": rows, "page_run": page, "kernels": probe_dict(kernels)}))
        return
    out(f"low-precision CPU kernels: {kernel_line(kernels)}")
    print_table(
        [
            [
                r.name,
                r.dtype,
                f"{r.untraced_ms:.1f}",
                f"{r.traced_ms:.1f}",
                f"{r.stats_us_per_output:.0f}",
                f"{r.full_ms:.1f}",
                f"{r.lesson_ms:.1f}",
                f"{r.bundle_bytes / 1024:.0f}",
                r.events,
                f"{r.relative_spread:.0%}",
            ]
            for r in rows
        ],
        [
            "config",
            "autocast",
            "untraced ms",
            "traced ms",
            "stats us/output",
            "trace+ref ms",
            "lesson ms",
            "bundle KiB",
            "events",
            "spread (IQR/median)",
        ],
    )
    if page is not None:
        out()
        out(
            f"a class on one link (?{page.query}, results cached): {page.sessions} fresh sessions at once, "
            f"server CPU {page.cpu_ms_per_session:.1f} ms per session, until complete p50 {page.p50_s:.2f} s, "
            f"p95 {page.p95_s:.2f} s, all in {page.wall_s:.1f} s" + ("" if page.ok else " (some sessions failed)")
        )


COMMANDS = {  # name → (declare arguments, run); mpviz.__main__ lists them in this order
    "policy": (_add_policy, _run_policy),
    "trace": (_add_trace, _run_trace),
    "bench": (_add_bench, _run_bench),
}
