"""A TUI session under umask 022 (Pilot, loopback server) that reads, writes, runs an approved command and
saves leaves nothing in swebash-ai's folders that another account could read."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest
from tui_helpers import idle, type_and_send, wait_for

from swebash_ai.frontends.tui.screens.confirm import ConfirmScreen
from swebash_ai.storage.locations import locations
from swebash_ai.testing.fake_server import FakeLLMServer, Reply
from swebash_ai.tools.exec import run_command
from swebash_ai.tools.fs import read_file
from swebash_ai.tools.fs_write import write_file


async def test_a_tui_session_stores_nothing_others_can_read(llm_env: FakeLLMServer, make_app, workspace: Path,
                                                            isolated_env: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed: no snapshots")
    (workspace / "notes.txt").write_text("secret plans\n")
    llm_env.enqueue(
        Reply.tool_calls([("read_file", {"path": "notes.txt"})]),
        Reply.tool_calls([("write_file", {"path": "made.txt", "content": "new\n"})]),
        Reply.text("Read and written."),
        Reply.tool_calls([("run_command", {"command": "touch ran.txt"})]),
        Reply.text("Ran it."),
    )
    old = os.umask(0o022)
    try:
        app = make_app(tools=[read_file, write_file, run_command])
        async with app.run_test(size=(120, 40)) as pilot:
            for text, done in (("read and write", "made.txt"), ("run it", "ran.txt")):
                await type_and_send(pilot, text)
                await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="approval")
                await pilot.press("y")
                await wait_for(pilot, (workspace / done).exists, what=f"{done} made")
                await idle(pilot)
    finally:
        os.umask(old)
    where = locations()
    assert where.prompt_history.exists() and list(where.sessions_dir.glob("*.jsonl"))
    assert (where.sessions_dir / "snapshots.git" / "objects").is_dir()
    home = isolated_env / ".swebash-ai"
    exposed = [p for p in [home, *home.rglob("*")] if not p.is_symlink() and os.lstat(p).st_mode & 0o077]
    assert exposed == []
    assert stat.S_IMODE((workspace / "made.txt").stat().st_mode) == 0o644  # the user's files: normal modes
