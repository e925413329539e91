"""Tools the model can call, and the contract they follow (see ``registry``)."""

from __future__ import annotations

import importlib

from swebash_ai.tools.registry import Tool, ToolContext, ToolRegistry, ToolResult, tool

__all__ = ["Tool", "ToolContext", "ToolRegistry", "ToolResult", "builtin_tools", "tool"]

#: Modules that each export ``TOOLS: list[Tool]``, in the order tools are offered to the model.
TOOL_MODULES = (
    "swebash_ai.tools.fs",
    "swebash_ai.tools.fs_write",
    "swebash_ai.tools.search",
    "swebash_ai.tools.find",
    "swebash_ai.tools.exec",
    "swebash_ai.tools.background",
    "swebash_ai.tools.web",
    "swebash_ai.tools.plan",
    "swebash_ai.tools.ask",
)


def builtin_tools() -> list[Tool]:
    """Every built-in tool (before the settings' filters)."""
    out: list[Tool] = []
    for name in TOOL_MODULES:
        out.extend(importlib.import_module(name).TOOLS)
    return out
