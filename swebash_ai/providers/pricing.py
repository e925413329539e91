"""Token prices for the fast lane, and what a model takes, read from the model data litellm ships, without
importing litellm.

``import litellm`` costs seconds; its bundled ``model_prices_and_context_window_backup.json`` is just data.
Only the entry of the model asked about is parsed (see :func:`_entry`), on the first priced turn (or the first
image attached: :func:`supports_vision`), never at start-up.
"""

from __future__ import annotations

import importlib.util
import json
import logging
from functools import cache
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


def _price_list() -> str:
    """The text of litellm's price list ("" when litellm is not installed). Read again for each model asked
    about (:func:`_entry` keeps the answer), never kept: 3 MB a session would hold for nothing."""
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return ""
    if spec is None or not spec.submodule_search_locations:
        return ""
    for folder in spec.submodule_search_locations:
        path = Path(folder) / "model_prices_and_context_window_backup.json"
        if path.is_file():
            try:
                return path.read_text(encoding="utf-8")
            except (OSError, ValueError) as exc:
                log.debug("cannot read %s: %s", path, exc)
    return ""


@cache
def _prices() -> dict[str, Any]:
    """The whole list, parsed (3 MB of JSON: 20 ms)."""
    try:
        data = json.loads(_price_list() or "{}")
    except ValueError as exc:
        log.debug("cannot read the price list: %s", exc)
        return {}
    return data if isinstance(data, dict) else {}


@cache
def _entry(name: str) -> Any:
    """One model's entry. The list is pretty-printed: a top-level key starts a line, indented by at most four
    spaces (nested keys by eight or more), so the entry is found by a search and only it is parsed (a one-shot
    answer paid 20 ms of CPU for the whole list). A list laid out otherwise is parsed whole."""
    text = _price_list()
    if not text.startswith('{\n    "'):
        return _prices().get(name)
    key = f"{json.dumps(name)}: {{"
    end = len(text)
    while (at := text.rfind(key, 0, end)) >= 0:  # the last one, as json.loads keeps the last of duplicate keys
        indent = text[text.rfind("\n", 0, at) + 1 : at]
        if len(indent) <= 4 and not indent.strip():
            try:
                return json.JSONDecoder().raw_decode(text, at + len(key) - 1)[0]
            except ValueError:
                return _prices().get(name)
        end = at
    return None


def cost_of(
    model: str, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0, cache_write_tokens: int = 0
) -> float | None:
    """Cost in USD, or ``None`` when the model's price is unknown (local models, unknown names).

    ``cached_tokens`` and ``cache_write_tokens`` are parts of ``prompt_tokens``, priced at the entry's
    ``cache_read_input_token_cost`` and ``cache_creation_input_token_cost`` when it has them (the input price
    otherwise), as litellm prices them.
    """
    entry = _entry(model) or _entry(model.split("/", 1)[-1])
    if not isinstance(entry, dict):
        return None
    try:
        base = float(entry.get("input_cost_per_token", 0))
        read = float(entry.get("cache_read_input_token_cost", base))
        write = float(entry.get("cache_creation_input_token_cost", base))
        fresh = max(0, prompt_tokens - cached_tokens - cache_write_tokens)
        return (
            base * fresh
            + read * cached_tokens
            + write * cache_write_tokens
            + float(entry.get("output_cost_per_token", 0)) * completion_tokens
        )
    except (TypeError, ValueError):
        return None


def supports_vision(model: str) -> bool | None:
    """Does ``model`` take images? As ``litellm.supports_vision`` answers from the same data: a listed model
    takes them when its entry says ``supports_vision: true``, and not otherwise. ``None``: the model is not
    listed (a local or new model), so only the provider can tell."""
    entry = _entry(model) or _entry(model.split("/", 1)[-1])
    if not isinstance(entry, dict):
        return None
    return entry.get("supports_vision") is True
