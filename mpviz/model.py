"""A small pre-norm self-attention block that tells the whole mixed-precision story in one layer.

    x ─ LayerNorm ─ q/k/v projections ─ scores = q·kᵀ/√d ─ (causal mask) ─ softmax ─ probs·v ─ out_proj ─┐
    └──────────────────────────────────────── residual add ─────────────────────────────────────────────┴─ head ─ loss

Weights and inputs come from a private `torch.Generator` seeded by `AttentionConfig.seed`, so two sessions
(threads) building the same config get bit-identical models without touching torch's global RNG.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass, fields, replace

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from mpviz.landmarks import mark, mark_grad

# Autocast dtypes the app offers, by every accepted spelling; None means autocast off. The first spelling of
# each dtype is the short name the CLI and URLs use.
AUTOCAST_DTYPES: dict[str, torch.dtype | None] = {
    "off": None,
    "fp16": torch.float16,
    "bf16": torch.bfloat16,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
}
AUTOCAST_CHOICES: tuple[str, ...] = ("off", "fp16", "bf16")  # the short spellings, in display order
_AUTOCAST_OFF_SPELLINGS = ("none", "null", "fp32", "float32")  # "train in float32" means autocast off
ATTENTION_KINDS = ("manual", "sdpa")
SOFTMAX_KINDS = ("torch", "naive")


class ConfigError(ValueError):
    """A configuration outside mpviz's limits.

    `field` names the offending setting, `value` is what was asked for and `limit` the bound it broke (or the
    allowed choices). Views translate these into their own words; `str()` is an English fallback for the CLI.
    """

    def __init__(self, field: str, value: object, limit: object, reason: str) -> None:
        self.field, self.value, self.limit, self.reason = field, value, limit, reason
        super().__init__(f"{field}={value!r}: {reason} (limit: {limit})")


@dataclass(frozen=True)
class Limits:
    """Size ceilings. fp16 on CPU has no native kernels (many times slower than fp32 and bf16: `python -m mpviz
    bench` measures how much here), hence its smaller ceiling."""

    max_seq_len: int = 512
    max_d_model: int = 512
    max_heads: int = 16
    max_vocab: int = 512
    max_input_scale: float = 1e6
    fp16_cpu_max_seq_len: int = 256
    fp16_cpu_max_d_model: int = 256


LIMITS = Limits()
# Devices whose arithmetic runs on the CPU ("cuda-sim": CUDA's autocast policy emulated on CPU tensors).
CPU_COMPUTED = ("cpu", "cuda-sim")


@dataclass(frozen=True)
class AttentionConfig:
    seq_len: int = 16
    d_model: int = 64
    n_heads: int = 4
    vocab: int = 32  # tiny vocabulary head so the loss path has its own dtype story
    causal: bool = True
    attention: str = "manual"  # "manual" (matmul/softmax/matmul) or "sdpa" (F.scaled_dot_product_attention)
    softmax: str = "torch"  # manual path only: "torch" or "naive" (exp/sum without max subtraction)
    input_scale: float = 1.0  # multiplies the input so scores can be pushed toward fp16's limit
    seed: int = 0

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> AttentionConfig:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})

    def replace(self, **changes: object) -> AttentionConfig:
        return replace(self, **changes)


def parse_autocast_dtype(spelling: object) -> torch.dtype | None:
    """The autocast dtype any accepted spelling names; None means autocast off.

    Accepted: None, "off", "fp16", "bf16", "float16", "bfloat16" (any case, "torch." prefix allowed; "none",
    "fp32" and "float32" also mean off) and torch.float16 / torch.bfloat16 (torch.float32: off). Anything else,
    float64, an int or "fp8" included, raises ConfigError("dtype", …): autocast has no such dtype, and running
    without it under that label would mislead.
    """
    if spelling is None:
        return None
    if isinstance(spelling, torch.dtype):
        if spelling in (torch.float16, torch.bfloat16):
            return spelling
        if spelling == torch.float32:
            return None
    elif isinstance(spelling, str):
        key = spelling.strip().lower().removeprefix("torch.")
        key = "off" if key in _AUTOCAST_OFF_SPELLINGS else key
        if key in AUTOCAST_DTYPES:
            return AUTOCAST_DTYPES[key]
    raise ConfigError("dtype", spelling, AUTOCAST_CHOICES, "not an autocast dtype")


# Field → (the type it must have, its name in a ConfigError). bool is an int to Python, never a size here.
_FIELD_TYPES: dict[str, tuple[type, str]] = {
    "seq_len": (numbers.Integral, "int"),
    "d_model": (numbers.Integral, "int"),
    "n_heads": (numbers.Integral, "int"),
    "vocab": (numbers.Integral, "int"),
    "causal": (bool, "bool"),
    "attention": (str, "str"),
    "softmax": (str, "str"),
    "input_scale": (numbers.Real, "float"),
    "seed": (numbers.Integral, "int"),
}


def _type_ok(name: str, value: object) -> bool:
    wanted = _FIELD_TYPES[name][0]
    if wanted is bool:
        return isinstance(value, (bool, np.bool_))
    return isinstance(value, wanted) and not isinstance(value, (bool, np.bool_))


def validate(cfg: AttentionConfig, device: str = "cpu", dtype: torch.dtype | None = None) -> AttentionConfig:
    """Return `cfg` unchanged if it is within `LIMITS` for this device/dtype, else raise `ConfigError`.

    Types come first (reason "wrong type", limit the expected type's name): "8", 4.5 and True are not a
    sequence length, "no" is not a bool. Construction never raises, so `clamp` can repair a config from a URL.
    `dtype` is the autocast dtype (see `parse_autocast_dtype`): float64 or an int raise ConfigError("dtype", …).
    """
    dtype = parse_autocast_dtype(dtype)
    for f in fields(cfg):
        if not _type_ok(f.name, getattr(cfg, f.name)):
            raise ConfigError(f.name, getattr(cfg, f.name), _FIELD_TYPES[f.name][1], "wrong type")
    lim = LIMITS
    checks: list[tuple[str, object, object, bool, str]] = [
        ("seq_len", cfg.seq_len, (1, lim.max_seq_len), 1 <= cfg.seq_len <= lim.max_seq_len, "out of range"),
        ("d_model", cfg.d_model, (1, lim.max_d_model), 1 <= cfg.d_model <= lim.max_d_model, "out of range"),
        ("n_heads", cfg.n_heads, (1, lim.max_heads), 1 <= cfg.n_heads <= lim.max_heads, "out of range"),
        ("vocab", cfg.vocab, (2, lim.max_vocab), 2 <= cfg.vocab <= lim.max_vocab, "out of range"),
        ("attention", cfg.attention, ATTENTION_KINDS, cfg.attention in ATTENTION_KINDS, "unknown choice"),
        ("softmax", cfg.softmax, SOFTMAX_KINDS, cfg.softmax in SOFTMAX_KINDS, "unknown choice"),
    ]
    scale_ok = math.isfinite(cfg.input_scale) and 0 < abs(cfg.input_scale) <= lim.max_input_scale
    checks.append(("input_scale", cfg.input_scale, lim.max_input_scale, scale_ok, "must be finite, non-zero"))
    checks.append(("seed", cfg.seed, (0, 2**31 - 1), 0 <= cfg.seed < 2**31, "out of range"))
    for name, value, limit, ok, reason in checks:
        if not ok:
            raise ConfigError(name, value, limit, reason)
    if cfg.d_model % cfg.n_heads:
        raise ConfigError("n_heads", cfg.n_heads, cfg.d_model, "must divide d_model")
    if dtype == torch.float16 and device in CPU_COMPUTED:
        if cfg.seq_len > lim.fp16_cpu_max_seq_len:
            raise ConfigError("seq_len", cfg.seq_len, lim.fp16_cpu_max_seq_len, "fp16 on CPU is slow")
        if cfg.d_model > lim.fp16_cpu_max_d_model:
            raise ConfigError("d_model", cfg.d_model, lim.fp16_cpu_max_d_model, "fp16 on CPU is slow")
    return cfg


# Multiply-adds of one forward pass above which a run takes a noticeable share of a second on one core: such runs
# go through the process-wide admission gate (mpviz.app.serving.admission) instead of starting at once.
HEAVY_WORK = 2**23
FP16_CPU_SLOWDOWN = 16  # fp16 on a CPU without fp16 units runs roughly this much slower than fp32 (measured: 11–50×)


def work(cfg: AttentionConfig, device: str = "cpu", dtype: torch.dtype | None = None) -> int:
    """Rough multiply-adds of one forward pass of `cfg` (projections, scores, probs·v, head), fp16-on-CPU weighted."""
    T, d = cfg.seq_len, cfg.d_model
    madds = 4 * T * d * d + 2 * T * T * d + T * d * cfg.vocab
    return madds * (FP16_CPU_SLOWDOWN if dtype == torch.float16 and device in CPU_COMPUTED else 1)


def is_heavy(cfg: AttentionConfig, device: str = "cpu", dtype: torch.dtype | None = None) -> bool:
    """Whether a trace of `cfg` should wait for a slot of the admission gate (see HEAVY_WORK)."""
    return work(cfg, device, dtype) > HEAVY_WORK


def clamp(
    cfg: AttentionConfig, device: str = "cpu", dtype: torch.dtype | None = None
) -> tuple[AttentionConfig, list[ConfigError]]:
    """The nearest config within `LIMITS`, and the errors that were corrected to get there (for a UI to show).

    Values of the wrong type and unknown choices go to the default, out-of-range numbers to the nearest bound,
    n_heads to the largest divisor of d_model not above it. `validate(result)` always passes.
    """
    dtype = parse_autocast_dtype(dtype)  # not a field: an unknown dtype is the caller's error, not repaired
    fixed: list[ConfigError] = []
    default = AttentionConfig()
    for _ in range(2 * len(fields(cfg)) + 3):  # each pass fixes one field (type, then range): bounded
        try:
            return validate(cfg, device, dtype), fixed
        except ConfigError as e:
            fixed.append(e)
            if e.reason == "wrong type":
                value = getattr(default, e.field)
            elif isinstance(e.limit, tuple) and all(isinstance(v, (int, float)) for v in e.limit):
                lo, hi = e.limit
                value = min(max(getattr(cfg, e.field), lo), hi)
            elif e.field == "n_heads" and e.reason == "must divide d_model":
                value = max(h for h in range(1, cfg.n_heads + 1) if cfg.d_model % h == 0)
            elif e.field == "input_scale":
                x = cfg.input_scale
                value = min(abs(x), LIMITS.max_input_scale) if math.isfinite(x) and x != 0 else 1.0
            elif isinstance(e.limit, int):  # a single ceiling (fp16 on CPU)
                value = e.limit
            else:
                value = getattr(default, e.field)
            cfg = replace(cfg, **{e.field: value})
    return validate(cfg, device, dtype), fixed


class Attention(nn.Module):
    """Multi-head self-attention with separate q/k/v projections so each shows up as its own module."""

    def __init__(self, cfg: AttentionConfig) -> None:
        super().__init__()
        self.cfg = cfg
        d = cfg.d_model
        self.q_proj, self.k_proj, self.v_proj = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.out_proj = nn.Linear(d, d)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        cfg, (T, C) = self.cfg, h.shape
        H, hd = cfg.n_heads, cfg.head_dim
        q = mark(self.q_proj(h), "q")  # (T, C)
        k = mark(self.k_proj(h), "k")
        v = mark(self.v_proj(h), "v")
        for t, name in ((q, "grad_q"), (k, "grad_k"), (v, "grad_v")):
            mark_grad(t, name)
        q, k, v = (t.view(T, H, hd).transpose(0, 1) for t in (q, k, v))  # (H, T, hd)
        if cfg.attention == "sdpa":
            # Fused kernel: scores and probs never exist as tensors, so they cannot be marked.
            ctx = F.scaled_dot_product_attention(q, k, v, is_causal=cfg.causal)  # (H, T, hd)
        else:
            scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))  # (H, T, T)
            if cfg.causal:
                future = torch.ones(T, T, dtype=torch.bool, device=h.device).triu(1)
                scores = scores.masked_fill(future, float("-inf"))
            scores = mark_grad(mark(scores, "scores"), "grad_scores")
            if cfg.softmax == "naive":
                e = torch.exp(scores)  # no max subtraction: overflows once scores pass log(max) of the dtype
                probs = e / e.sum(dim=-1, keepdim=True)
            else:
                probs = torch.softmax(scores, dim=-1)
            probs = mark_grad(mark(probs, "probs"), "grad_probs")  # (H, T, T)
            ctx = probs @ v  # (H, T, hd)
        ctx = mark_grad(mark(ctx.transpose(0, 1).reshape(T, C), "context"), "grad_context")  # (T, C)
        return self.out_proj(ctx)


class AttentionBlock(nn.Module):
    """Pre-norm block plus a tiny vocabulary head and cross-entropy loss: returns the scalar loss."""

    def __init__(self, cfg: AttentionConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.ln = nn.LayerNorm(cfg.d_model)
        self.attn = Attention(cfg)
        self.head = nn.Linear(cfg.d_model, cfg.vocab)
        self.loss = nn.CrossEntropyLoss()

    def forward(self, x: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        x = mark(x * self.cfg.input_scale, "x")  # (T, C): the scale is an op so the trace sees x's dtype
        h = mark_grad(mark(self.ln(x), "x_norm"), "grad_x_norm")
        out = mark_grad(mark(x + self.attn(h), "out"), "grad_out")  # residual: fp32 x + low-precision attn → promotion
        logits = mark_grad(mark(self.head(out), "logits"), "grad_logits")  # (T, vocab)
        return mark(self.loss(logits, targets), "loss")


def build(
    cfg: AttentionConfig, device: str | torch.device = "cpu", dtype: torch.dtype = torch.float32
) -> tuple[AttentionBlock, torch.Tensor, torch.Tensor]:
    """Model, input x (T, C) and targets (T,) for `cfg`, deterministic from `cfg.seed`, on `device`/`dtype`."""
    g = torch.Generator().manual_seed(cfg.seed)
    model = AttentionBlock(cfg)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            if name.startswith("ln."):  # LayerNorm would undo x's scale: its gain carries it on into q/k/v
                p.fill_(cfg.input_scale if name.endswith("weight") else 0.0)
            else:  # nn.Linear's default range, U(-1/√fan_in, 1/√fan_in), drawn from our own generator
                bound = 1.0 / math.sqrt(cfg.d_model)
                p.copy_(torch.rand(p.shape, generator=g) * 2 * bound - bound)
    x = torch.randn(cfg.seq_len, cfg.d_model, generator=g)
    targets = torch.randint(0, cfg.vocab, (cfg.seq_len,), generator=g)
    return model.to(device=device, dtype=dtype), x.to(device=device, dtype=dtype), targets.to(device)
