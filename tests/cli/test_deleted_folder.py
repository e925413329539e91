"""A working folder deleted or unreadable, at start or mid-turn: one sentence and an exit code, never a
traceback (``Path.cwd()`` raises once the folder is gone)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from swebash_ai.frontends import cli
from swebash_ai.testing.fake_server import FakeLLMServer, Reply

from ._helpers import REPO


@pytest.mark.parametrize("args", [["-c", "hi"], ["-c", "hi", "--json"], ["config"]])
def test_started_in_a_deleted_folder(tmp_path: Path, cli_env: dict[str, str], args: list[str]) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    script = f'cd "{gone}" && rmdir "{gone}" && exec "$0" -m swebash_ai "$@"'
    env = {**cli_env, "PYTHONPATH": str(REPO)}  # no empty entry: Python cannot make one absolute without a cwd
    res = subprocess.run(["bash", "-c", script, sys.executable, *args], env=env, capture_output=True,
                         text=True, timeout=120, stdin=subprocess.DEVNULL, cwd=REPO)
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr and res.stdout == ""
    assert res.stderr.strip().splitlines() == [
        "swebash-ai: the folder you started it in no longer exists (deleted or moved away); change to an existing "
        "folder and start it again."]


def test_started_in_an_unreadable_folder(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                         workspace: Path) -> None:
    """As root no folder is unreadable, so the check's answer is what is changed here."""
    monkeypatch.setattr(cli.os, "access", lambda path, mode: False)
    assert cli.main(["-c", "hi"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("swebash-ai: the folder you started it in (") and "cannot be read" in err
    assert len(err.strip().splitlines()) == 1


def test_started_where_a_folder_above_cannot_be_reached(monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    def denied() -> str:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(cli.os, "getcwd", denied)
    assert cli.main(["-c", "hi"]) == 2
    assert capsys.readouterr().err == ("swebash-ai: the folder you started it in cannot be reached (Permission "
                                       "denied); change to a folder you can read and start it again.\n")


def test_the_folder_deleted_mid_turn(llm_env: FakeLLMServer, run_cli: Any, workspace: Path) -> None:
    """The workspace goes away while the model is thinking: the calls after it fail with words, the answer
    ends, the session is saved, and no traceback."""
    (workspace / "a.txt").write_text("alpha\n")
    seen: list[int] = []

    def answer(body: dict[str, Any]) -> Reply:
        seen.append(1)
        if len(seen) == 1:
            return Reply.tool_calls([("read_file", {"path": "a.txt"})])
        if len(seen) == 2:
            shutil.rmtree(workspace)
            return Reply.tool_calls([("read_file", {"path": "a.txt"}), ("list_dir", {"path": "."}),
                                     ("run_command", {"command": "ls"})])
        return Reply.text("The folder is gone.")

    llm_env.responder = answer
    res = run_cli("-c", "read a.txt twice", "--json")
    assert "Traceback" not in res.stderr
    events = [json.loads(line) for line in res.stdout.splitlines()]
    results = [e for e in events if e["type"] == "tool_result"]
    assert [r["ok"] for r in results] == [True, False, False, False], results
    assert all(r["content"] for r in results)
    final = events[-1]
    assert final["type"] == "final" and final["text"] == "The folder is gone." and res.returncode == 0
    assert list((Path(os.environ["SWEBASH_AI_HOME"]) / "sessions").glob("*.jsonl"))
