"""A project's own [lsp.NAME] tables (in .swebash-ai/rules.toml) choose programs to run: they wait for the user's
trust, like its hooks, and the trust prompt lists them."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from lsp_helpers import fake_spec

from swebash_ai.config.settings import load_settings
from swebash_ai.session import Session
from swebash_ai.tools.diagnostics import after_edit


async def test_project_servers_wait_for_trust_then_run(
        workspace: Path, lsp_on: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWEBASH_AI_EXEC_SANDBOX", "none")
    spec = fake_spec(workspace)
    rules = workspace / ".swebash-ai" / "rules.toml"
    rules.parent.mkdir()
    rules.write_text(f'[lsp.fake]\ncommand = {json.dumps(list(spec.command))}\nextensions = [".fk"]\n'
                     'languages = ["fake"]\n')
    session = Session(load_settings(), cwd=workspace, probe_ollama=False, environ=dict(os.environ))
    try:
        assert session.project.needs_trust and session.trust_notice is not None
        summary = "\n".join(session.project.summary())
        assert f"lsp    fake: runs {sys.executable} -m swebash_ai.testing.fake_lsp" in summary
        text, data = await after_edit(session.context, workspace / "a.fk", "ERROR: x\n")
        assert text == "" and data is None  # untrusted: no server knows .fk files, nothing started
        session.trust_project()
        text, data = await after_edit(session.context, workspace / "a.fk", "ERROR: x\n")
        assert data is not None and data["status"] == "ok" and data["errors"] == 1, text
    finally:
        await session.aclose()


def test_a_bad_project_lsp_table_leaves_the_file_out_with_the_reason(workspace: Path) -> None:
    rules = workspace / ".swebash-ai" / "rules.toml"
    rules.parent.mkdir()
    rules.write_text('[lsp.ty]\ncommand = "ty server"\n')
    session = Session(load_settings(), cwd=workspace, probe_ollama=False, environ=dict(os.environ))
    assert "command must be a list of strings" in session.project.problem
