"""AttentionConfig validation: wrong types and non-autocast dtypes are ConfigErrors, and clamp repairs them."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from mpviz.model import (
    AUTOCAST_CHOICES,
    AUTOCAST_DTYPES,
    AttentionConfig,
    ConfigError,
    clamp,
    parse_autocast_dtype,
    validate,
)

WRONG_TYPES = [
    ("seq_len", "8"),
    ("seq_len", 4.5),
    ("seq_len", 8.0),
    ("seq_len", True),
    ("d_model", None),
    ("n_heads", "4"),
    ("vocab", [32]),
    ("seed", 1.5),
    ("seed", "0"),
    ("causal", "no"),
    ("causal", 0),
    ("attention", 1),
    ("softmax", None),
    ("input_scale", "1e3"),
    ("input_scale", True),
]


@pytest.mark.parametrize(("field", "value"), WRONG_TYPES)
def test_a_value_of_the_wrong_type_is_a_config_error_and_clamp_repairs_it(field, value):
    cfg = AttentionConfig(**{field: value})  # construction never raises: the view repairs URL values
    with pytest.raises(ConfigError) as e:
        validate(cfg)
    assert (e.value.field, e.value.reason) == (field, "wrong type")
    fixed, errors = clamp(cfg)
    assert getattr(fixed, field) == getattr(AttentionConfig(), field)
    assert [err.field for err in errors] == [field]


def test_numpy_scalars_of_the_right_kind_are_accepted():
    cfg = AttentionConfig(seq_len=np.int64(8), causal=np.bool_(False), input_scale=np.float32(2.0), seed=np.int32(3))
    assert validate(cfg) is cfg


@pytest.mark.parametrize(
    ("spelling", "dtype"),
    [
        (None, None),
        ("off", None),
        ("fp32", None),
        ("float32", None),
        (torch.float32, None),
        ("fp16", torch.float16),
        ("FP16", torch.float16),
        ("float16", torch.float16),
        ("torch.float16", torch.float16),
        (torch.float16, torch.float16),
        ("bf16", torch.bfloat16),
        ("bfloat16", torch.bfloat16),
        (torch.bfloat16, torch.bfloat16),
    ],
)
def test_every_accepted_autocast_spelling(spelling, dtype):
    assert parse_autocast_dtype(spelling) is dtype


@pytest.mark.parametrize("spelling", [torch.float64, torch.int8, torch.float8_e4m3fn, "fp8", "float64", 16, True, ""])
def test_anything_else_is_not_an_autocast_dtype(spelling):
    with pytest.raises(ConfigError) as e:
        parse_autocast_dtype(spelling)
    assert e.value.field == "dtype" and e.value.limit == AUTOCAST_CHOICES


def test_validate_and_clamp_refuse_a_dtype_autocast_does_not_have():
    """trace_attention(cfg, "cpu", torch.float64) used to run with autocast off, labelled float64."""
    with pytest.raises(ConfigError, match="dtype"):
        validate(AttentionConfig(), "cpu", torch.float64)
    with pytest.raises(ConfigError, match="dtype"):
        clamp(AttentionConfig(), "cpu", torch.float64)


def test_the_short_choices_are_spellings_of_the_registry():
    assert set(AUTOCAST_CHOICES) <= set(AUTOCAST_DTYPES)
    assert {parse_autocast_dtype(c) for c in AUTOCAST_CHOICES} == set(AUTOCAST_DTYPES.values())


@settings(max_examples=60, deadline=None)
@given(
    st.fixed_dictionaries(
        {},
        optional={
            name: st.one_of(st.integers(-(10**6), 10**6), st.floats(allow_nan=True), st.text(max_size=4), st.booleans())
            for name in ("seq_len", "d_model", "n_heads", "vocab", "seed", "input_scale", "causal")
        },
    )
)
def test_clamp_always_ends_valid_or_raises_nothing(changes):
    fixed, _ = clamp(AttentionConfig(**changes), "cpu", torch.float16)
    assert validate(fixed, "cpu", torch.float16) is fixed
