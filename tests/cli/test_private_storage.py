"""What swebash-ai stores is readable by its user alone, whatever the umask: a real one-shot under umask 022
leaves no group or other bits anywhere in its folders; an older install is tightened once at the next start,
without following a link planted in its folders; ``doctor`` reports what is still exposed."""

from __future__ import annotations

import json
import os
import shutil
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from swebash_ai.commands.undo import undo_saved_session
from swebash_ai.storage import private_files
from swebash_ai.storage.locations import locations
from swebash_ai.testing.fake_server import FakeLLMServer, Reply
from swebash_ai.tools.checkpoints import UndoRefused


@pytest.fixture
def umask_022() -> Iterator[None]:
    """The usual umask of a shared machine; the children the tests start inherit it."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def _exposed(top: Path) -> list[str]:
    """Every path under ``top`` (itself included) with a group or other bit, links excepted."""
    found = []
    for path in [top, *top.rglob("*")]:
        st = os.lstat(path)
        if not stat.S_ISLNK(st.st_mode) and st.st_mode & 0o077:
            found.append(f"{path.relative_to(top)} {stat.filemode(st.st_mode)}")
    return found


def test_a_one_shot_that_reads_writes_runs_and_saves_stores_nothing_others_can_read(
    umask_022: None, llm_env: FakeLLMServer, run_cli: Any, workspace: Path, isolated_env: Path
) -> None:
    (workspace / "notes.txt").write_text("secret plans\n")
    llm_env.enqueue(
        Reply.tool_calls([("read_file", {"path": "notes.txt"})]),
        Reply.tool_calls([("write_file", {"path": "made.txt", "content": "new\n"})]),
        Reply.tool_calls([("run_command", {"command": "touch ran.txt"})]),
        Reply.text("Done."),
    )
    res = run_cli("-c", "read, write, run", "--yes")
    assert res.returncode == 0, res.stderr
    home = isolated_env / ".swebash-ai"
    where = locations()
    sessions = list(where.sessions_dir.glob("*.jsonl"))
    assert sessions and "secret plans" in sessions[0].read_text()  # the transcript holds what the model read
    assert where.audit_log.exists()
    assert list(where.sessions_dir.glob("*.checkpoints/index.jsonl"))  # the write was checkpointed
    assert (where.sessions_dir / "snapshots.git" / "objects").is_dir()  # the approved command was snapshotted
    assert _exposed(home) == []
    # Files the user asked for in the workspace keep the workspace's normal modes.
    assert stat.S_IMODE((workspace / "made.txt").stat().st_mode) == 0o644
    assert stat.S_IMODE((workspace / "ran.txt").stat().st_mode) == 0o644


def _old_install(home: Path, outside: Path) -> None:
    """What an earlier version left: 0755 folders, 0644 files, a snapshot store holding ``.env``."""
    sessions = home / "sessions"
    (sessions / "s1.checkpoints" / "blobs").mkdir(parents=True)
    (sessions / "s1.jsonl").write_text(json.dumps({"meta": {"id": "s1"}}) + "\n")
    (sessions / "s1.checkpoints" / "blobs" / "ab").write_text("old content")
    (home / "audit.jsonl").write_text("{}\n")
    store = sessions / "snapshots.git"
    (store / "objects").mkdir(parents=True)
    (store / "HEAD").write_text("ref: refs/heads/main\n")
    (store / "objects" / "blob").write_text("API_KEY=sk-live")
    (home / "link-out").symlink_to(outside)  # planted: tightening must not follow it
    command = {"kind": "command", "id": "c1", "turn": 1, "command": "make", "root": str(home), "time": 1.0,
               "before": "a" * 40}
    (sessions / "s1.checkpoints" / "index.jsonl").write_text(
        json.dumps(command) + "\n" + json.dumps({"kind": "command_after", "id": "c1", "after": "b" * 40}) + "\n")
    for path in [home, *home.rglob("*")]:
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() else 0o644)


def test_an_older_install_is_tightened_once_and_links_are_not_followed(
    umask_022: None, run_cli: Any, tmp_path: Path, isolated_env: Path
) -> None:
    home = isolated_env / ".swebash-ai"
    outside = tmp_path / "someone-elses.txt"
    outside.write_text("not ours")
    outside.chmod(0o644)
    _old_install(home, outside)

    res = run_cli("config")
    assert res.returncode == 0, res.stderr
    assert _exposed(home) == []
    assert stat.S_IMODE((home / "sessions" / "s1.jsonl").stat().st_mode) == 0o600
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert stat.S_IMODE(outside.stat().st_mode) == 0o644 and (home / "link-out").is_symlink()
    # The old snapshot store may hold .env and keys: it is gone, and undo will say why.
    assert not (home / "sessions" / "snapshots.git").exists()
    assert (home / "sessions" / private_files.SNAPSHOTS_CLEARED).exists()
    with pytest.raises(UndoRefused, match="its snapshots were removed when undo stopped storing protected files"):
        undo_saved_session(home / "sessions", "s1")

    # Once: later starts only look at the marker (a file widened since stays so, and doctor says it).
    (home / "audit.jsonl").chmod(0o644)
    assert run_cli("config").returncode == 0
    assert stat.S_IMODE((home / "audit.jsonl").stat().st_mode) == 0o644
    assert private_files.exposed([home]) == [home / "audit.jsonl"]


def test_doctor_reports_what_others_can_read_and_protected_files_in_the_snapshot_store(
    isolated_env: Path,
) -> None:
    from swebash_ai.commands.doctor import _storage_checks
    from swebash_ai.config.settings import load_settings

    home = isolated_env / ".swebash-ai"
    private_files.write_file(home / "sessions" / "s.jsonl", b"{}\n")
    private, store = _storage_checks(load_settings())
    assert private.status == "ok" and store.status == "ok"
    (home / "sessions" / "s.jsonl").chmod(0o644)
    private, _ = _storage_checks(load_settings())
    assert private.status == "warn" and "s.jsonl" in private.detail and "chmod -R go-rwx" in private.fix

    if shutil.which("git") is None:
        return
    from swebash_ai.tools.snapshots import ShadowRepo

    ws = isolated_env / "ws-old"  # a store filled the old way: git add of everything
    ws.mkdir()
    (ws / ".env").write_text("API_KEY=x\n")
    (ws / "main.py").write_text("print()\n")
    repo = ShadowRepo(home / "sessions" / "snapshots.git", ws)
    deadline = time.monotonic() + 30
    repo._git("init", "-q", "--bare", str(repo.git_dir), deadline=deadline, init=True)
    private_files.make_dirs(repo.index.parent)
    repo._git("add", "-A", "--", ".", deadline=deadline)
    repo._git("write-tree", deadline=deadline)
    _, store = _storage_checks(load_settings())
    assert store.status == "warn" and ".env" in store.detail and "main.py" not in store.detail


def test_private_writes_beat_the_umask_and_refuse_a_planted_link(tmp_path: Path) -> None:
    old = os.umask(0o000)
    try:
        private_files.write_file(tmp_path / "a" / "b" / "f", b"x")
        with private_files.open_append(tmp_path / "a" / "log") as fh:
            fh.write(b"line\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "a" / "b").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "a" / "b" / "f").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "a" / "log").stat().st_mode) == 0o600
    target = tmp_path / "elsewhere"
    target.write_text("")
    (tmp_path / "a" / "planted").symlink_to(target)
    with pytest.raises(OSError):
        private_files.open_append(tmp_path / "a" / "planted")
    assert target.read_text() == ""


def test_home_and_shared_folders_are_never_tightened(isolated_env: Path, tmp_path: Path) -> None:
    """``SWEBASH_AI_HOME=~`` (or ``/tmp``) must not chmod every file the user (or the machine) has."""
    shared = isolated_env / "public.txt"
    shared.write_text("")
    shared.chmod(0o644)
    sticky = tmp_path / "tmp"
    (sticky / "x").mkdir(parents=True)
    sticky.chmod(0o1777)
    assert private_files.tighten([isolated_env, sticky]) == 0
    assert stat.S_IMODE(shared.stat().st_mode) == 0o644
    assert stat.S_IMODE(sticky.stat().st_mode) == 0o1777 and stat.S_IMODE((sticky / "x").stat().st_mode) != 0o700
