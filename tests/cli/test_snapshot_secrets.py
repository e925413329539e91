"""Undo snapshots never copy what the tools may not read: a real approved command (one-shot, scripted server)
changes ``.env``, a private key, ``secrets.yaml``, a hard link to ``~/.aws/credentials`` and an ordinary file;
the snapshot store holds the ordinary file alone, and undo puts it back and names the others."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from swebash_ai.commands.undo import undo_saved_session
from swebash_ai.storage.locations import locations
from swebash_ai.testing.fake_server import FakeLLMServer, Reply
from swebash_ai.tools.checkpoints import UndoRefused


@pytest.fixture(autouse=True)
def _unsandboxed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Commands here run unconfined (``--yes`` would send them to the sandbox):
    these tests are about undo snapshots of commands a person or --yes let write .env.
    What the sandbox does to background processes is tests/sandbox's subject."""
    monkeypatch.setenv("SWEBASH_AI_EXEC_SANDBOX", "none")

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed: no snapshots")

PROTECTED = (".env", "id_rsa", "config/secrets.yaml", "creds")


def _stored(git_dir: Path, commit: str) -> list[str]:
    out = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", "-r", "--name-only", commit],
                         capture_output=True, text=True, check=True).stdout
    return out.split()


def _commands(sessions: Path) -> list[dict[str, Any]]:
    index = next(sessions.glob("*.checkpoints/index.jsonl"))
    return [json.loads(line) for line in index.read_text().splitlines()]


def test_protected_files_are_never_snapshotted_and_undo_names_them(
    llm_env: FakeLLMServer, run_cli: Any, workspace: Path, isolated_env: Path
) -> None:
    aws = isolated_env / ".aws"
    aws.mkdir()
    (aws / "credentials").write_text("aws_secret_access_key = AWS-CANARY\n")
    os.link(aws / "credentials", workspace / "creds")  # an innocent name for the user's AWS key
    (workspace / ".env").write_text("API_KEY=ENV-CANARY\n")
    (workspace / "id_rsa").write_text("KEY-CANARY\n")
    (workspace / "config").mkdir()
    (workspace / "config" / "secrets.yaml").write_text("token: YAML-CANARY\n")
    (workspace / "notes.txt").write_text("before\n")
    # The policy denies a command naming a protected path; a script it cannot see into changes them all.
    (workspace / "change.sh").write_text("".join(f"echo changed >> {p}\n" for p in (*PROTECTED, "notes.txt")))
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": "sh change.sh"})]), Reply.text("Ran it."))
    res = run_cli("-c", "run the script", "--yes")
    assert res.returncode == 0, res.stderr
    assert "changed" in (aws / "credentials").read_text()  # the command really changed them all

    sessions = locations().sessions_dir
    store = sessions / "snapshots.git"
    entries = _commands(sessions)
    before = next(e for e in entries if e["kind"] == "command")
    after = next(e for e in entries if e["kind"] == "command_after")
    for commit in (before["before"], after["after"]):
        assert sorted(_stored(store, commit)) == ["change.sh", "notes.txt"]
    assert sorted(before["protected"]) == sorted(PROTECTED)
    for canary in ("AWS-CANARY", "ENV-CANARY", "KEY-CANARY", "YAML-CANARY"):  # not even a loose blob
        grep = subprocess.run(["grep", "-rl", canary, str(store)], capture_output=True, text=True)
        assert grep.stdout == "", grep.stdout

    with pytest.raises(UndoRefused) as refused:  # a plain undo would claim too much: it names what it cannot
        undo_saved_session(sessions, None)
    assert "not snapshotted: .env is protected" in str(refused.value) and "--force" in str(refused.value)
    assert (workspace / "notes.txt").read_text() == "before\nchanged\n"

    summary = undo_saved_session(sessions, None, force=True).summary()  # what `swebash-ai undo --force` prints
    assert (workspace / "notes.txt").read_text() == "before\n"
    for name in PROTECTED:
        assert f"{workspace / name}: NOT restored (not snapshotted: {name} is protected)" in summary
    assert (workspace / ".env").read_text() == "API_KEY=ENV-CANARY\nchanged\n"


def test_a_path_deny_entry_is_left_out_too(llm_env: FakeLLMServer, run_cli: Any, workspace: Path) -> None:
    (workspace / "data").mkdir()
    (workspace / "data" / "customers.sqlite").write_text("rows\n")
    (workspace / "main.py").write_text("print()\n")
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": "touch made.txt"})]), Reply.text("Ok."))
    res = run_cli("-c", "touch", "--yes", env={"SWEBASH_AI_PATH_DENY": "data"})
    assert res.returncode == 0, res.stderr
    sessions = locations().sessions_dir
    before = next(e for e in _commands(sessions) if e["kind"] == "command")
    assert _stored(sessions / "snapshots.git", before["before"]) == ["main.py"]
