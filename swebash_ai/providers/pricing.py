"""Token prices for the fast lane, read from the price list litellm ships, without importing litellm.

``import litellm`` costs seconds; its bundled ``model_prices_and_context_window_backup.json`` is just data.
The file is parsed once, on the first priced turn, never at start-up.
"""

from __future__ import annotations

import importlib.util
import json
import logging
from functools import cache
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


@cache
def _prices() -> dict[str, Any]:
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return {}
    if spec is None or not spec.submodule_search_locations:
        return {}
    for folder in spec.submodule_search_locations:
        path = Path(folder) / "model_prices_and_context_window_backup.json"
        if path.is_file():
            try:
                data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
                return data
            except (OSError, ValueError) as exc:
                log.debug("cannot read %s: %s", path, exc)
    return {}


def cost_of(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """Cost in USD, or ``None`` when the model's price is unknown (local models, unknown names)."""
    prices = _prices()
    entry = prices.get(model) or prices.get(model.split("/", 1)[-1])
    if not isinstance(entry, dict):
        return None
    try:
        return (
            float(entry.get("input_cost_per_token", 0)) * prompt_tokens
            + float(entry.get("output_cost_per_token", 0)) * completion_tokens
        )
    except (TypeError, ValueError):
        return None
