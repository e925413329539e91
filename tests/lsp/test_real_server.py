"""Over a real language server (ty, from the test extra): an edit that introduces an undefined name and a type
error returns both with their lines; the next edit that fixes them returns none and never the old ones."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from swebash_ai.config.settings import load_settings
from swebash_ai.safety.paths import PathPolicy
from swebash_ai.tools.fs_write import edit_file, write_file
from swebash_ai.tools.registry import ToolContext, ToolResult

_BIN = str(Path(sys.executable).parent)
pytestmark = pytest.mark.skipif(shutil.which("ty", path=os.pathsep.join([_BIN, os.environ.get("PATH", "")])) is None,
                                reason="ty (the [lsp] extra) is not installed")

BROKEN = '''def double(x: int) -> int:
    return x * 2


total: int = double("two")
print(undefined_name)
'''


async def _run(tool: Any, ctx: ToolContext, **args: Any) -> ToolResult:
    return await tool.invoke(ctx, tool.args_model(**args))


async def test_ty_reports_the_new_errors_with_lines_then_none_after_the_fix(
        workspace: Path, isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWEBASH_AI_LSP_DIAGNOSTICS", "edit")
    monkeypatch.setenv("SWEBASH_AI_LSP_WAIT", "20")  # a loaded machine: the first start may be slow
    monkeypatch.setenv("PATH", os.pathsep.join([_BIN, os.environ.get("PATH", "")]))
    (workspace / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0"\n')
    ctx = ToolContext(settings=load_settings().settings, cwd=workspace,
                      path_policy=PathPolicy(roots=[workspace], home=isolated_env), services={})
    try:
        wrote = await _run(write_file, ctx, path="demo.py", content=BROKEN)
        meta = wrote.metadata["diagnostics"]
        assert meta["status"] == "ok" and meta["server"] == "ty", wrote.text
        found = {(d["line"], d["code"]) for d in meta["items"]}
        assert found == {(5, "invalid-argument-type"), (6, "unresolved-reference")}, wrote.text
        assert "demo.py:6:7: error[unresolved-reference] (ty) Name `undefined_name` used when not defined" in wrote.text
        assert "demo.py:5:21: error[invalid-argument-type]" in wrote.text

        fixed = await _run(edit_file, ctx, path="demo.py", old='double("two")\nprint(undefined_name)',
                           new="double(2)\nprint(total)")
        assert fixed.metadata["diagnostics"] == {**fixed.metadata["diagnostics"], "status": "ok", "errors": 0,
                                                 "items": []}
        assert "no problems in demo.py" in fixed.text and "undefined_name" not in fixed.text

        # And again, broken and fixed in quick turns: never the previous version's diagnostics.
        for content, errors in ((BROKEN, 2), (BROKEN.replace('"two"', "2"), 1), ("x: int = 1\n", 0)):
            got = await _run(write_file, ctx, path="demo.py", content=content)
            assert got.metadata["diagnostics"]["errors"] == errors, got.text
    finally:
        if (svc := ctx.services.get("lsp")) is not None:
            pids = svc.pids()
            await svc.aclose()
            from lsp_helpers import gone_within

            assert gone_within(pids)
