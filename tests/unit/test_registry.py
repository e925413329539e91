"""The tool contract: schema from the signature, validation messages, registry filters."""

from __future__ import annotations

from typing import Annotated, Literal

import pytest
from pydantic import Field

from swebash_ai.config.settings import load_settings
from swebash_ai.errors import ConfigError
from swebash_ai.tools.registry import ToolContext, ToolRegistry, ToolResult, parse_docstring, tool


@tool("fs")
async def sample(
    ctx: ToolContext,
    path: str,
    mode: Literal["a", "b"] = "a",
    limit: Annotated[int, Field(ge=1, le=5)] = 2,
    tags: list[str] | None = None,
) -> str:
    """Do a sample thing.

    Second paragraph of the description.

    Args:
        path: Where to do it.
        mode: Which way.
        limit: How many, at most
            five.
        tags: Labels.

    Returns:
        Nothing useful.
    """
    return f"{path}:{mode}:{limit}"


@tool("exec")
async def other(ctx: ToolContext) -> ToolResult:
    """Other."""
    return ToolResult.success("x")


@tool("web")
async def third(ctx: ToolContext) -> ToolResult:
    """Third."""
    return ToolResult.success("x")


def test_schema_comes_from_the_signature_and_docstring() -> None:
    fn = sample.definition()["function"]
    assert fn["name"] == "sample"
    assert fn["description"] == "Do a sample thing.\n\nSecond paragraph of the description."
    params = fn["parameters"]
    assert params["required"] == ["path"] and params["additionalProperties"] is False
    assert params["properties"]["path"] == {"type": "string", "description": "Where to do it."}
    assert params["properties"]["mode"]["enum"] == ["a", "b"]
    assert params["properties"]["limit"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 5,
        "default": 2,
        "description": "How many, at most five.",
    }
    assert "title" not in str(params)


def test_docstring_parser_handles_types_and_continuations() -> None:
    desc, params = parse_docstring("Top.\n\nArgs:\n    a (int): First\n        more.\n    b: Second.\n")
    assert desc == "Top." and params == {"a": "First more.", "b": "Second."}


async def test_non_result_return_values_are_wrapped() -> None:
    args = sample.parse_arguments('{"path": "p", "mode": "b"}')
    assert not isinstance(args, ToolResult)
    result = await sample.invoke(ToolContext(load_settings().settings, cwd=__import__("pathlib").Path(".")), args)
    assert result.ok and result.content == "p:b:2" and result.duration >= 0


def test_enum_violation_message() -> None:
    result = sample.parse_arguments('{"path": "p", "mode": "c"}')
    assert isinstance(result, ToolResult) and "'mode'" in result.text and "'a' or 'b'" in result.text


def test_tool_must_be_async_and_take_ctx_first() -> None:
    with pytest.raises(TypeError, match="async"):
        tool("fs")(lambda ctx: None)  # type: ignore[arg-type]

    async def no_ctx(path: str) -> str:
        return path

    with pytest.raises(TypeError, match="ctx"):
        tool("fs")(no_ctx)


def test_registry_filters_by_category_allow_and_deny(monkeypatch: pytest.MonkeyPatch) -> None:
    tools = [sample, other, third]
    assert ToolRegistry.from_settings(load_settings().settings, tools).names() == ["sample", "other", "third"]
    monkeypatch.setenv("SWEBASH_AI_TOOLS_EXEC", "false")
    assert ToolRegistry.from_settings(load_settings().settings, tools).names() == ["sample", "third"]
    monkeypatch.setenv("SWEBASH_AI_TOOLS_DENY", "third")
    registry = ToolRegistry.from_settings(load_settings().settings, tools)
    assert registry.names() == ["sample"]
    assert [d["function"]["name"] for d in registry.definitions()] == ["sample"]  # denied: never offered
    monkeypatch.delenv("SWEBASH_AI_TOOLS_DENY")
    monkeypatch.delenv("SWEBASH_AI_TOOLS_EXEC")
    monkeypatch.setenv("SWEBASH_AI_TOOLS_ALLOW", "other")
    assert ToolRegistry.from_settings(load_settings().settings, tools).names() == ["other"]


def test_unknown_names_in_allow_or_deny_are_config_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWEBASH_AI_TOOLS_DENY", "rm_rf")
    with pytest.raises(ConfigError, match="rm_rf"):
        ToolRegistry.from_settings(load_settings().settings, [sample])


def test_duplicate_names_are_refused() -> None:
    with pytest.raises(ValueError, match="two tools"):
        ToolRegistry([sample, sample])


def test_a_failing_policy_fails_closed() -> None:
    def broken(ctx: ToolContext, args: object) -> None:
        raise RuntimeError("bug")

    guarded = tool("exec", policy=broken)(other.fn)  # type: ignore[arg-type]
    args = guarded.parse_arguments("{}")
    assert not isinstance(args, ToolResult)
    verdict = guarded.check(ToolContext(load_settings().settings, cwd=__import__("pathlib").Path(".")), args)
    assert verdict.decision == "ask" and "safety check failed" in verdict.reasons[0]
