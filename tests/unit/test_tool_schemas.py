"""The built-in tools' schemas are generated data (tools/schemas.py), so a start builds no pydantic model.

These guard that the data can never differ from what the models say, that a tool edited without regenerating
falls back to its model, and that the argument model is still built (at the first call) with the same
validation messages.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import swebash_ai.tools
from swebash_ai.docgen import schemas_module
from swebash_ai.tools import builtin_tools, loaded_builtin_tools
from swebash_ai.tools.registry import LazyTool, Tool, ToolContext, ToolRegistry, signature_fingerprint
from swebash_ai.tools.schemas import SCHEMAS

SCHEMAS_FILE = Path(__file__).resolve().parents[2] / "swebash_ai" / "tools" / "schemas.py"


def test_every_cached_schema_equals_its_models_schema() -> None:
    tools = builtin_tools()
    assert sorted(SCHEMAS) == sorted(t.name for t in tools)
    for t in tools:
        assert SCHEMAS[t.name]["fingerprint"] == signature_fingerprint(t.name, t.fn), t.name
        assert t.parameters == t.schema_from_model(), f"{t.name}: run python -m swebash_ai.docgen"


def test_the_committed_module_is_what_docgen_writes() -> None:
    assert SCHEMAS_FILE.read_text(encoding="utf-8") == schemas_module(), "run python -m swebash_ai.docgen"


def test_a_tool_edited_without_regenerating_gets_its_schema_from_its_model() -> None:
    real = next(t for t in builtin_tools() if t.name == "read_file")

    async def read_file(ctx: ToolContext, path: str, start_line: int = 1, colour: str = "red") -> str:
        """Read a file (a changed signature).

        Args:
            path: Where.
            start_line: From.
            colour: A new argument the data does not know.
        """
        return path

    edited = Tool(read_file, category="fs")
    assert edited.parameters != real.parameters
    assert "colour" in edited.parameters["properties"]
    assert edited.parameters == edited.schema_from_model()


def test_the_argument_model_is_built_at_the_first_call_with_the_same_messages() -> None:
    fresh = Tool(next(t for t in builtin_tools() if t.name == "read_file").fn, category="fs")
    assert fresh._args_model is None  # the schema came from the data
    bad = fresh.parse_arguments('{"path": "a", "start_line": 0, "colour": 1}')
    assert fresh._args_model is not None
    assert not isinstance(bad, Tool)
    text = getattr(bad, "content", "")
    assert text.startswith("Invalid arguments for read_file: ")
    assert "'start_line': Input should be greater than or equal to 1 (got 0)" in text
    assert "unknown argument 'colour' (accepted: path, start_line, end_line)" in text
    assert text.endswith("Expected: {path: string, start_line: integer (optional), end_line: integer/null (optional)}.")
    good = fresh.parse_arguments({"path": "a.txt"})
    assert getattr(good, "path", None) == "a.txt"


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_each_tool_owns_its_schema(name: str) -> None:
    tool = next(t for t in builtin_tools() if t.name == name)
    tool.parameters["properties"]["x"] = {}
    try:
        assert "x" not in SCHEMAS[name]["parameters"]["properties"]
    finally:
        del tool.parameters["properties"]["x"]


def test_a_definition_sent_and_changed_by_its_sender_leaves_the_tool_schema_as_it_was() -> None:
    # litellm deletes additionalProperties in place for Gemini; the next request (any provider) must still
    # send the whole schema.
    tools = builtin_tools()
    before = {t.name: json.dumps(t.parameters, sort_keys=True) for t in tools}
    registry = ToolRegistry(tools)
    for definition in registry.definitions():
        definition["function"]["parameters"].pop("additionalProperties", None)
        definition["function"]["parameters"]["properties"].clear()
    assert {t.name: json.dumps(t.parameters, sort_keys=True) for t in tools} == before
    assert all(d["function"]["parameters"].get("additionalProperties") is False for d in registry.definitions())


def test_the_lazy_tools_are_the_modules_tools_in_the_same_order() -> None:
    lazy, loaded = builtin_tools(), loaded_builtin_tools()
    assert all(isinstance(t, LazyTool) for t in lazy)  # the committed data matches every module's source
    assert [t.definition() for t in lazy] == [t.definition() for t in loaded]
    assert [t.category for t in lazy] == [t.category for t in loaded]
    assert [t.fn for t in lazy] == [t.fn for t in loaded]  # the module's own function, loaded at first use


def test_a_module_edited_without_regenerating_is_imported_and_its_own_tools_offered(
        monkeypatch: pytest.MonkeyPatch) -> None:
    real = swebash_ai.tools.source_digest
    monkeypatch.setattr(swebash_ai.tools, "source_digest",
                        lambda module: "edited" if module == "swebash_ai.tools.fs" else real(module))
    tools = {t.name: t for t in builtin_tools()}
    assert not isinstance(tools["read_file"], LazyTool)
    assert tools["read_file"] in importlib.import_module("swebash_ai.tools.fs").TOOLS
    assert isinstance(tools["write_file"], LazyTool)  # the other modules still wait for a call


_FIRST_CALL = """
import asyncio, sys
from pathlib import Path
from swebash_ai.config.settings import Settings
from swebash_ai.tools import ToolContext, builtin_tools
read = next(t for t in builtin_tools() if t.name == "read_file")
before = "swebash_ai.tools.fs" in sys.modules
args = read.parse_arguments({"path": "a.txt"})
ctx = ToolContext(settings=Settings(), cwd=Path.cwd())
verdict = read.check(ctx, args)
result = asyncio.run(read.invoke(ctx, args))
print(before, "swebash_ai.tools.fs" in sys.modules, verdict.decision, result.ok, result.text.strip())
"""


def test_a_lazy_tool_imports_its_module_at_its_first_call(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    env = {**os.environ, "PYTHONPATH": str(SCHEMAS_FILE.parents[2]), "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", _FIRST_CALL], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=60, check=True).stdout
    *flags, text = out.split(maxsplit=4)
    assert flags == ["False", "True", "allow", "True"]  # not imported by the start; imported by the call
    assert text.rstrip().endswith("1| hello")
