"""The Python↔JS contracts, one JSON file each: Python reads them here, esbuild bundles them into the stepper.

- personal_keys.json: URL keys that are a browser's role in a class, never in a shared link (mpviz/app/page.py,
  assets/components/stepper/place.js).
- stepper_keys.json: the stepper's own URL keys and the values of view and phase (mpviz/app/url.py, place.js).
- stepper_meta.schema.json: the payload's "meta" (mpviz/presentation/stepper_payload.py builds it, stepper/meta.js
  reads it).
- bundle.schema.json: the lesson bundle (mpviz/bundle.py, mpviz/model_bundle.py write it; the stepper reads it).
The two schemas are JSON Schema 2020-12 (jsonschema's default) without a "$schema" key: the stepper carries them, and
the offline lesson file names no URL at all.

Tests tie both sides: tests/test_contracts.py (Python) and assets/components/stepper/test/contracts.test.js (node).
Plain data, no imports beyond the standard library: any layer may read them.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from typing import Any

__all__ = ["BUNDLE_SCHEMA", "LEGACY_ELEMENT_KEYS", "META_SCHEMA", "PERSONAL_KEYS", "PLACE_KEYS", "load"]


@cache
def load(name: str) -> Any:
    """The parsed contents of contract `name` (a file of this package), read once per process."""
    return json.loads(files(__name__).joinpath(name).read_text(encoding="utf-8"))


PERSONAL_KEYS: tuple[str, ...] = tuple(load("personal_keys.json"))
PLACE_KEYS: tuple[str, ...] = tuple(load("stepper_keys.json")["place"])
LEGACY_ELEMENT_KEYS: tuple[str, ...] = tuple(load("stepper_keys.json")["legacy_element"])
META_SCHEMA: dict = load("stepper_meta.schema.json")
BUNDLE_SCHEMA: dict = load("bundle.schema.json")
