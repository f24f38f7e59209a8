"""mpviz.trace on models nobody here wrote: a nanoGPT-style GPT and tiny Hugging Face GPT-2 / Llama from a config.

Each is traced forward and backward under CPU autocast (bf16) with the probed CPU policy, as the app traces its
own block. Every op must be attributed to a real `named_modules()` path ("" is the model itself), autocast's
casts must be flagged and go where the policy sends them, and tied weights must get one sane gradient landmark.

Weight tying, as decided: a tied parameter has one name, its first in `named_parameters()` (GPT-2's and this GPT's
`transformer.wte.weight`, which `lm_head.weight` is too). Its gradient landmark is the op that produced the
gradient autograd hands to the parameter: the sum of every use's contribution, attributed to the module whose
backward node made the last one, with the contributions of both uses among its sources.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import pytest
import torch
import torch.nn.functional as F
import transformers  # a test dependency (requirements-dev.txt): missing, this module fails loudly
from torch import nn
from torch.overrides import TorchFunctionMode

from mpviz import trace
from mpviz.policy import device_policy


@functools.cache
def cpu_policy() -> dict[str, str]:
    return {op: cat for cat, ops in device_policy("cpu").categories.items() for op in ops}


# ── a nanoGPT-style GPT, written here from the paper's description, not imported ─────────────────────────────
@dataclass
class GPTConfig:
    block_size: int = 16
    vocab_size: int = 64
    n_layer: int = 2
    n_head: int = 2
    n_embd: int = 32
    flash: bool = False  # F.scaled_dot_product_attention instead of the explicit softmax(q·kᵀ)·v


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.c_attn = nn.Linear(cfg.n_embd, 3 * cfg.n_embd)
        self.c_proj = nn.Linear(cfg.n_embd, cfg.n_embd)
        self.n_head, self.flash = cfg.n_head, cfg.flash
        mask = torch.tril(torch.ones(cfg.block_size, cfg.block_size, dtype=torch.bool))
        self.register_buffer("bias", mask.view(1, 1, cfg.block_size, cfg.block_size), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))  # (B, H, T, hd)
        if self.flash:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(~self.bias[:, :, :T, :T], float("-inf"))
            y = F.softmax(att, dim=-1) @ v
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


class MLP(nn.Module):
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.c_fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * cfg.n_embd, cfg.n_embd)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.ln_1, self.attn = nn.LayerNorm(cfg.n_embd), CausalSelfAttention(cfg)
        self.ln_2, self.mlp = nn.LayerNorm(cfg.n_embd), MLP(cfg)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.transformer = nn.ModuleDict(
            {
                "wte": nn.Embedding(cfg.vocab_size, cfg.n_embd),
                "wpe": nn.Embedding(cfg.block_size, cfg.n_embd),
                "h": nn.ModuleList([Block(cfg) for _ in range(cfg.n_layer)]),
                "ln_f": nn.LayerNorm(cfg.n_embd),
            }
        )
        self.lm_head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        self.lm_head.weight = self.transformer.wte.weight  # weight tying

    def forward(self, idx: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def _gpt(attention: str):
    torch.manual_seed(0)
    model = GPT(GPTConfig(flash=attention == "sdpa"))
    idx = torch.randint(0, 64, (2, 12))
    return model, lambda: model(idx, idx)


def _hf(kind: str, attention: str):
    torch.manual_seed(0)
    quiet = {"bos_token_id": None, "eos_token_id": None, "pad_token_id": None}
    if kind == "gpt2":
        cfg = transformers.GPT2Config(n_layer=2, n_head=2, n_embd=32, vocab_size=64, n_positions=32, **quiet)
        model = transformers.GPT2LMHeadModel._from_config(cfg, attn_implementation=attention)
    else:
        cfg = transformers.LlamaConfig(
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=1,
            vocab_size=64,
            max_position_embeddings=32,
            **quiet,
        )
        model = transformers.LlamaForCausalLM._from_config(cfg, attn_implementation=attention)
    assert model.config._attn_implementation == attention
    ids = torch.randint(0, 64, (2, 8))
    return model, lambda: model(input_ids=ids, labels=ids).loss


MODELS = {"nanogpt": _gpt, "gpt2": functools.partial(_hf, "gpt2"), "llama": functools.partial(_hf, "llama")}


# A functional whose ATen op has another name (the mode sees the Python function, autocast the op it calls).
OP_OF_FUNCTION = {"aten::cross_entropy": "aten::cross_entropy_loss"}


class AutocastRequests(TorchFunctionMode):
    """Every call that reaches an enabled autocast (torch functions run above the dispatcher), named as the policy
    names its op ("aten::matmul" for `a @ b`), with the floating dtypes of its tensor arguments."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, set[torch.dtype]]] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        flat = [*args, *kwargs.values()]
        flat += [t for a in flat if isinstance(a, (list, tuple)) for t in a]  # cat's and stack's tensor lists
        dtypes = {a.dtype for a in flat if isinstance(a, torch.Tensor) and a.is_floating_point()}
        if torch.is_autocast_enabled("cpu"):  # not inside a model's own `autocast(enabled=False)` (rotary freqs)
            op = "aten::" + getattr(func, "__name__", "").strip("_")
            self.calls.append((OP_OF_FUNCTION.get(op, op), dtypes))
        return func(*args, **kwargs)


def casts_expected(calls: list[tuple[str, set[torch.dtype]]]) -> set[str]:
    """The policy ops autocast had to feed with a cast, from what each call was given: a lower-precision op any
    float32 argument, an fp32 op any bfloat16 one, a promote op arguments of more than one floating dtype."""
    policy, wants = cpu_policy(), {"lower_precision_fp": torch.float32, "fp32": torch.bfloat16}
    out = set()
    for op, dtypes in calls:
        category = policy.get(op)
        if wants.get(category) in dtypes or (category == "promote" and len(dtypes) > 1):
            out.add(op)
    return out


@functools.cache
def traced(name: str, attention: str):
    model, loss_of = MODELS[name]("eager" if attention == "eager" else "sdpa")
    requests = AutocastRequests()
    with trace(model, policy=cpu_policy()) as t:
        with torch.autocast("cpu", dtype=torch.bfloat16), requests:
            loss = loss_of()
        loss.backward()
    return model, t, casts_expected(requests.calls)


CASES = [(name, attention) for name in MODELS for attention in ("eager", "sdpa")]


@pytest.mark.parametrize(("name", "attention"), CASES)
def test_every_op_is_attributed_to_a_real_module_path(name, attention):
    model, t, _ = traced(name, attention)
    paths = {n for n, _ in model.named_modules()}
    assert {e.module for e in t.events} <= paths
    layers = {p for p in paths if p.count(".") == 2 and p.split(".")[-1].isdigit()}  # transformer.h.0, model.layers.1
    for phase in ("forward", "backward"):
        modules = {e.module for e in t.events if e.phase == phase}
        for layer in layers:  # every block is seen, by its full path, in both passes
            assert any(m.startswith(layer + ".") for m in modules), (phase, layer)
    assert not t.backward_unrecorded


@pytest.mark.parametrize(("name", "attention"), CASES)
def test_autocasts_casts_are_flagged_where_the_cpu_policy_sends_them(name, attention):
    """Which ops get casts depends on the model's code (a transformers release may move where float32 meets
    bfloat16): the expectation comes from what the model called autocast with, not from one release's internals."""
    _, t, expected = traced(name, attention)
    casts = [e for e in t.events if e.autocast_cast and e.phase == "forward"]
    assert casts and all(e.op == "aten._to_copy.default" for e in casts)
    policy = cpu_policy()
    for e in casts:
        category = policy[e.autocast_op.replace(".default", "").replace("aten.", "aten::")]
        assert e.outputs[0].dtype == ("bfloat16" if category == "lower_precision_fp" else "float32"), (e, category)
    fed = {e.autocast_op.removesuffix(".default").replace("aten.", "aten::") for e in casts}
    assert fed == expected  # exactly the ops the model called with arguments the policy had to cast
    assert fed & {"aten::linear", "aten::addmm"}  # the projections
    assert any(e.autocast_cast for e in t.events if e.phase == "backward")  # gradients of those casts


@pytest.mark.parametrize(("name", "attention"), [c for c in CASES if c[0] != "llama"])
def test_a_tied_weight_has_one_gradient_landmark_summing_both_uses(name, attention):
    model, t, _ = traced(name, attention)
    assert model.lm_head.weight is model.transformer.wte.weight
    assert "grad_lm_head.weight" not in t.landmarks  # one parameter, one name: its first
    grad = t.landmark_event("grad_transformer.wte.weight")
    assert grad.phase == "backward" and grad.module in ("transformer.wte", "lm_head")
    assert grad.outputs[0].dtype == "float32" and grad.outputs[0].shape == tuple(model.lm_head.weight.shape)
    feeding = {t.events[s].module for s in grad.sources if isinstance(s, int)}
    assert feeding == {"transformer.wte", "lm_head"}  # the embedding's and the head's contributions, summed
