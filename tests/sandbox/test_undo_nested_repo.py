"""``undo`` takes away a nested repository a sandboxed command created and the check after the run kept (its
config runs nothing): the snapshots leave ``.git`` folders out, so without this it stayed after an undo."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from swebash_ai.agent.approval import AllowApprover
from swebash_ai.sandbox import detect
from swebash_ai.tools.checkpoints import UndoRefused
from tests.approvals.conftest import call_once

pytestmark = [pytest.mark.skipif(not detect.choose("auto").ok, reason="no sandbox works here"),
              pytest.mark.skipif(shutil.which("git") is None, reason="needs git")]


def _git(*args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@e", *args], check=True, capture_output=True)


def _files(ws: Path) -> list[str]:
    return sorted(str(p.relative_to(ws)) for p in ws.rglob("*") if not str(p.relative_to(ws)).startswith(".git"))


def test_undo_removes_the_repository_a_sandboxed_command_made(workspace: Path) -> None:
    _git("init", "-q", str(workspace))
    (workspace / "old").mkdir()
    (workspace / "old" / "keep.txt").write_text("mine\n")
    past = time.time() - 3600
    os.utime(workspace / "old" / "keep.txt", (past, past))  # the user's file, from before the command
    command = "git init -q sub && echo x > sub/f && echo y > b.txt && git init -q old"
    done, _, session = call_once("run_command", {"command": command}, workspace, AllowApprover())
    assert done.result.metadata["sandbox"] == detect.choose("auto").backend  # --yes: confined
    assert f"a new repository was created at {workspace.resolve() / 'sub'}" in done.result.text
    assert "undo removes it" in done.result.text
    assert (workspace / "sub" / ".git").is_dir() and (workspace / "old" / ".git").is_dir()
    result = session.undo()
    summary = result.summary()
    assert _files(workspace) == ["old", "old/keep.txt"], summary  # b.txt, sub/ and old/.git gone; keep.txt stays
    assert (workspace / "old" / "keep.txt").read_text() == "mine\n"
    assert f"{workspace.resolve() / 'sub' / '.git'}: removed with its folder" in summary
    assert f"{workspace.resolve() / 'old' / '.git'}: removed (the repository the command created); the files" in summary


def test_a_commit_made_in_it_since_is_not_thrown_away_without_force(workspace: Path) -> None:
    _git("init", "-q", str(workspace))
    done, _, session = call_once("run_command", {"command": "git init -q sub && echo x > sub/f"}, workspace,
                                 AllowApprover())
    assert "undo removes it" in done.result.text
    time.sleep(0.05)  # the commit's files must be stamped after the command's end
    _git("-C", str(workspace / "sub"), "add", "f")
    _git("-C", str(workspace / "sub"), "commit", "-qm", "mine")
    with pytest.raises(UndoRefused, match=r"changed since the assistant.s turn: .*sub/\.git"):
        session.undo()
    assert (workspace / "sub" / ".git").is_dir()
    session.undo(force=True)
    assert not (workspace / "sub").exists()
