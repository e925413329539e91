"""A real third-party MCP server from the package index (mcp-server-git) through the real loop.

The demo server in this folder is ours; this one is not, so its tool names, schemas and results are what a user
gets. Skipped, with the reason, where mcp-server-git is not installed (it is in the test extra).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from swebash_ai.agent.approval import DenyApprover
from swebash_ai.config.settings import load_settings
from swebash_ai.session import Session
from swebash_ai.testing.fake_server import FakeLLMServer, Reply

pytest.importorskip("mcp_server_git", reason="mcp-server-git is not installed (pip install '.[test]')")
pytestmark = pytest.mark.timeout(90)


async def test_mcp_server_git_tools_run_through_the_loop_under_approval(
    llm_env: FakeLLMServer, config_toml: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-C", str(repo)]
    subprocess.run([*git, "init", "-q"], check=True)
    (repo / "a.txt").write_text("one\n")
    subprocess.run([*git, "add", "a.txt"], check=True)
    subprocess.run([*git, "commit", "-qm", "first commit"], check=True)
    (repo / "b.txt").write_text("untracked\n")
    config_toml.write_text(
        "[mcp_servers.git]\n"
        f'command = "{sys.executable}"\n'
        f'args = ["-m", "mcp_server_git", "--repository", "{repo}"]\n'
        'auto_approve = ["git_status", "git_log"]\n'
        "startup_timeout = 30\n"
    )
    session = Session(load_settings(), approver=DenyApprover(), tools=[], probe_ollama=False)
    try:
        assert await session.start_mcp() == []
        assert {"mcp__git__git_status", "mcp__git__git_add", "mcp__git__git_log"} <= set(session.registry.names())
        llm_env.enqueue(
            Reply.tool_calls([("mcp__git__git_status", {"repo_path": str(repo)})]),
            Reply.tool_calls([("mcp__git__git_add", {"repo_path": str(repo), "files": ["b.txt"]})]),
            Reply.text("done"),
        )
        events = [e async for e in session.run("what is the state of the repository?")]
        finished = [e for e in events if type(e).__name__ == "ToolCallFinished"]
        status, add = finished[0].result, finished[1].result
        assert status.ok and "b.txt" in status.content  # auto-approved: ran, and its output reached the model
        assert add.status == "denied" and "no terminal to ask for approval" in add.content  # asked; nobody to answer
        staged = subprocess.run([*git, "diff", "--cached", "--name-only"], capture_output=True, text=True).stdout
        assert staged == ""  # the denied git_add changed nothing
        offered = {t["function"]["name"] for t in llm_env.requests[0]["body"]["tools"]}
        assert "mcp__git__git_commit" in offered
    finally:
        await session.aclose()
