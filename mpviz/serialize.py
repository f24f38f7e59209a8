"""Turn mpviz result objects (dataclasses, numpy, torch dtypes) into strict JSON.

JSON has no inf/nan: they become the strings "inf", "-inf", "nan" so a reader can still see them.
Numpy arrays (tensor samples) are left out unless `arrays=True`: they are for drawing, not for the CLI.
A dataclass field declared with `metadata={"omit_none": True}` is left out while it is None.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

import numpy as np
import torch

from mpviz.stats import dtype_name


def to_jsonable(obj: Any, arrays: bool = False) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out = {}
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if (isinstance(value, np.ndarray) and not arrays) or (value is None and f.metadata.get("omit_none")):
                continue
            out[f.name] = to_jsonable(value, arrays)
        return out
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v, arrays) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v, arrays) for v in obj]
    if isinstance(obj, np.ndarray):
        return [to_jsonable(v, arrays) for v in obj.tolist()]
    if isinstance(obj, (np.floating, float)):
        x = float(obj)
        return x if math.isfinite(x) else ("nan" if math.isnan(x) else ("inf" if x > 0 else "-inf"))
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, torch.dtype):
        return dtype_name(obj)
    return obj


def dumps(obj: Any, arrays: bool = False, indent: int | None = None) -> str:
    return json.dumps(to_jsonable(obj, arrays), indent=indent, allow_nan=False)
