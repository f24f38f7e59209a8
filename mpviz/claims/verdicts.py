"""What a checked claim is: a verdict code, the named parts that decided it, the evidence, key numbers.

A claim is judged by its parts: each `Part` is one thing the claim says, measured true or false (on one device
where the devices were measured one by one). `verdict_of` turns parts into holds / partly_holds / does_not_hold;
`combine` turns per-device verdicts into one, or depends_on_device. Codes only: views word them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

VERDICTS = ("holds", "partly_holds", "depends_on_device", "does_not_hold", "inconclusive")


@dataclass(frozen=True)
class Part:
    """One thing a claim says, measured: `holds` is whether the measurement agrees with it."""

    code: str  # stable id within its claim; views word it ("softmax_out_fp32")
    holds: bool
    device: str | None = None  # "cpu" | "cuda" where the part was measured on one device; None otherwise
    subject: str | None = None  # what the part is about where a claim has one part per op, value or dtype


@dataclass(frozen=True)
class Checked:
    """One claim, measured."""

    claim: int
    verdict: str  # one of VERDICTS
    device_verdicts: dict[str, str]  # device → verdict where the devices were checked one by one; {} otherwise
    evidence: object  # the check's evidence dataclass (see each check)
    headline: dict[str, object]  # a few key measurements by name, for tables and the CLI
    parts: tuple[Part, ...] = ()  # what decided the verdict; () where a spread decides (the speed claim)
    about: str | None = None  # the device the tutorial speaks of, whose verdict is the claim's; None: every device


def verdict_of(parts: Iterable[Part | bool]) -> str:
    """holds when every part was measured true, partly_holds when some, does_not_hold when none."""
    flags = [p.holds if isinstance(p, Part) else bool(p) for p in parts]
    return "holds" if all(flags) else ("partly_holds" if any(flags) else "does_not_hold")


def combine(device_verdicts: dict[str, str]) -> str:
    """The devices' common verdict, or depends_on_device when they differ."""
    found = set(device_verdicts.values())
    return found.pop() if len(found) == 1 else "depends_on_device"


def judged(
    claim_id: int,
    parts: Sequence[Part],
    evidence: object,
    headline: dict[str, object],
    about: str | None = None,
) -> Checked:
    """A Checked whose verdict is decided by `parts`: per device when the parts name devices, else overall.

    `about`: the device the tutorial speaks of ("cuda" where its code runs on a GPU). Its verdict is then the
    claim's; the other devices are still measured and shown beside it, never folded into depends_on_device.
    """
    devices = list(dict.fromkeys(p.device for p in parts if p.device is not None))
    if devices:
        device_verdicts = {d: verdict_of(p for p in parts if p.device == d) for d in devices}
        verdict = device_verdicts[about] if about else combine(device_verdicts)
        return Checked(claim_id, verdict, device_verdicts, evidence, headline, tuple(parts), about)
    return Checked(claim_id, verdict_of(parts), {}, evidence, headline, tuple(parts))


def verdict_counts(results: Iterable[Checked]) -> dict[str, int]:
    """How many of `results` got each verdict, in VERDICTS order."""
    found = [r.verdict for r in results]
    return {v: found.count(v) for v in VERDICTS}
