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
