"""Reference docs are generated from the code; these fail when the committed text has drifted."""

from __future__ import annotations

from pathlib import Path

import pytest

from swebash_ai.docgen import refresh

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.mark.parametrize("name", ["configuration.md", "tools.md"])
def test_generated_reference_is_current(name: str) -> None:
    text = (DOCS / name).read_text(encoding="utf-8")
    assert "<!-- generated:" in text
    assert refresh(text) == text, f"docs/{name} is stale: run python -m swebash_ai.docgen"


def test_every_builtin_tool_is_documented() -> None:
    from swebash_ai.tools import builtin_tools

    text = (DOCS / "tools.md").read_text(encoding="utf-8")
    for t in builtin_tools():
        assert f"### `{t.name}`" in text
        assert t.description, f"{t.name} has no description for the model"


def test_cli_doc_opens_with_the_usage_help_prints() -> None:
    """docs/cli.md's first block is --help's usage: it had drifted, leaving out setup, undo, rules and trust."""
    from swebash_ai.frontends.cli import build_parser

    lines = [line.strip() for line in build_parser().format_usage().splitlines()]
    lines[0] = lines[0].removeprefix("usage: ")
    text = (DOCS / "cli.md").read_text(encoding="utf-8")
    assert text.split("```\n", 2)[1] == "\n".join(lines) + "\n"
