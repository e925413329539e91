"""Tools the model can call, and the contract they follow (see ``registry``)."""

from __future__ import annotations

import hashlib
import importlib
from pathlib import Path

from swebash_ai.tools.registry import LazyTool, Tool, ToolContext, ToolRegistry, ToolResult, tool

__all__ = ["Tool", "ToolContext", "ToolRegistry", "ToolResult", "builtin_tools", "tool"]

#: Modules that each export ``TOOLS: list[Tool]``, in the order tools are offered to the model.
TOOL_MODULES = (
    "swebash_ai.tools.fs",
    "swebash_ai.tools.fs_write",
    "swebash_ai.tools.search",
    "swebash_ai.tools.find",
    "swebash_ai.tools.diagnostics",
    "swebash_ai.tools.exec",
    "swebash_ai.tools.background",
    "swebash_ai.tools.web",
    "swebash_ai.tools.plan",
    "swebash_ai.tools.ask",
)


def builtin_tools() -> list[Tool]:
    """Every built-in tool (before the settings' filters).

    A tool module unchanged since ``tools/schemas.py`` was generated is not imported: its tools are
    :class:`LazyTool`\\ s made from that data, and the module is imported at a tool's first call. A module
    edited since (its source no longer matches the stored digest) is imported now, and its own tools are
    used, so a stale data file costs start-up time, never a wrong name, description or schema.
    """
    from swebash_ai.tools.schemas import SCHEMAS, SOURCES

    out: list[Tool] = []
    for module in TOOL_MODULES:
        if SOURCES.get(module) is None or SOURCES[module] != source_digest(module):
            out.extend(importlib.import_module(module).TOOLS)
            continue
        out.extend(LazyTool(module, name, entry["category"], entry["description"], entry["parameters"])
                   for name, entry in SCHEMAS.items() if entry["module"] == module)
    return out


def loaded_builtin_tools() -> list[Tool]:
    """Every built-in tool as its module defines it (the source of the generated data)."""
    return [t for module in TOOL_MODULES for t in importlib.import_module(module).TOOLS]


def source_digest(module: str) -> str | None:
    """A short digest of a tool module's source file; ``None`` when there is no source to read."""
    path = Path(__file__).with_name(module.rsplit(".", 1)[1] + ".py")
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    except OSError:
        return None
