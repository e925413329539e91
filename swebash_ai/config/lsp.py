"""``[lsp.NAME]`` tables: language servers the user adds, changes or turns off (``lsp/servers.py`` merges them).

Only their shape is checked here (a table of tables of known keys and types), so a typo is a
:class:`ConfigError` naming the table and the key; what they mean is the language-server layer's.
"""

from __future__ import annotations

import re
from typing import Any

from swebash_ai.errors import ConfigError

__all__ = ["LSP_KEYS", "parse_lsp_tables"]

_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,40}$")
LSP_KEYS: dict[str, type] = {"command": list, "languages": list, "extensions": list, "root_markers": list,
                             "enabled": bool, "settings": dict}
"""The keys of one ``[lsp.NAME]`` table and their TOML types."""


def parse_lsp_tables(raw: Any, where: str) -> dict[str, dict[str, Any]]:
    """Check the shape of an ``[lsp]`` table (``[lsp.NAME]`` tables of known keys).

    Raises:
        ConfigError: not a table of tables, a bad name or key, or a value of the wrong type.
    """
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: [lsp] must be a table of [lsp.NAME] tables.")
    known = LSP_KEYS
    out: dict[str, dict[str, Any]] = {}
    for name, table in raw.items():
        if not _NAME.match(name) or not isinstance(table, dict):
            raise ConfigError(f"{where}: [lsp.{name}] must be a table named with letters, digits, '.', '_' or '-'.")
        for key, value in table.items():
            kind = known.get(key)
            if kind is None:
                raise ConfigError(f"{where}: [lsp.{name}] has an unknown key {key!r} (known: {', '.join(known)}).")
            strings = not isinstance(value, list) or all(isinstance(v, str) and v for v in value)
            if not isinstance(value, kind) or not strings:
                what = "list of strings" if kind is list else kind.__name__
                raise ConfigError(f"{where}: [lsp.{name}] {key} must be a {what}.")
        out[name] = dict(table)
    return out
