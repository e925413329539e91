"""The shadow-git snapshots under undo: byte-exact round trips, limits, and a hostile workspace that gets to
configure nothing (no filter, no eol conversion, no fsmonitor, no hook runs)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from swebash_ai.tools.snapshots import Limits, ShadowRepo, matches, project_root, restore

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _revert(repo: ShadowRepo, before: str, after: str, modes: dict[str, int]) -> list[str]:
    done = []
    for change in repo.changes(before, after):
        path = repo.root / change.path
        assert matches(path, change.after), change
        done.append(f"{change.path}: {restore(repo, path, change.before, modes.get(change.path))}")
    return done


def test_round_trip_restores_content_modes_links_and_removes_new_files(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "secret.txt").write_text("s")
    (ws / "secret.txt").chmod(0o600)
    (ws / "tool").write_text("#!/bin/sh\n")
    (ws / "tool").chmod(0o755)
    (ws / "sub").mkdir()
    (ws / "sub" / "deep.txt").write_text("deep")
    os.symlink("tool", ws / "link")
    repo = ShadowRepo(tmp_path / "shadow.git", ws)
    first = repo.snapshot()
    assert first.commit and first.files == 4 and first.modes == {"secret.txt": 0o600}

    (ws / "secret.txt").unlink()
    (ws / "tool").chmod(0o644)
    shutil.rmtree(ws / "sub")
    (ws / "link").unlink()
    os.symlink("secret.txt", ws / "link")
    (ws / "new.txt").write_text("n")
    second = repo.snapshot()
    assert second.commit and second.commit != first.commit

    done = _revert(repo, first.commit, second.commit, first.modes)
    assert len(done) == 5
    assert (ws / "secret.txt").read_text() == "s" and (ws / "secret.txt").stat().st_mode & 0o777 == 0o600
    assert (ws / "tool").stat().st_mode & 0o777 == 0o755
    assert (ws / "sub" / "deep.txt").read_text() == "deep"
    assert os.readlink(ws / "link") == "tool"
    assert not (ws / "new.txt").exists()
    assert not (ws / ".git").exists()


def test_a_hostile_workspace_configures_nothing(tmp_path: Path) -> None:
    """Its own .git/config defines a clean filter, an fsmonitor and hooks; its .gitattributes asks for them
    and for eol conversion. The snapshot must store bytes as they are, and run none of it."""
    ws, marker = tmp_path / "ws", tmp_path / "PWNED"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    for key, value in (("filter.evil.clean", f"touch {marker}-filter; cat"), ("filter.evil.required", "true"),
                       ("core.fsmonitor", f"touch {marker}-fsmonitor"), ("core.hooksPath", str(ws / "hooks"))):
        subprocess.run(["git", "-C", str(ws), "config", key, value], check=True)
    (ws / "hooks").mkdir()
    for hook in ("pre-commit", "post-commit", "post-index-change", "reference-transaction"):
        (ws / "hooks" / hook).write_text(f"#!/bin/sh\ntouch {marker}-{hook}\n")
        (ws / "hooks" / hook).chmod(0o755)
    (ws / ".gitattributes").write_text("* text eol=crlf filter=evil ident\n")
    (ws / "data.txt").write_bytes(b"line one\nline two $Id$\n")
    (ws / "dos.txt").write_bytes(b"a\r\nb\r\n")
    repo = ShadowRepo(tmp_path / "shadow.git", project_root(ws))
    first = repo.snapshot()
    assert first.commit, first.reason
    (ws / "data.txt").write_bytes(b"changed")
    (ws / "dos.txt").unlink()
    second = repo.snapshot()
    assert second.commit
    _revert(repo, first.commit, second.commit, first.modes)
    assert (ws / "data.txt").read_bytes() == b"line one\nline two $Id$\n"
    assert (ws / "dos.txt").read_bytes() == b"a\r\nb\r\n"
    assert not list(tmp_path.glob("PWNED*"))


def test_limits_and_unsuitable_roots_are_skipped_with_a_reason(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(3):
        (ws / f"f{i}").write_text("x" * 1000)
    shadow = tmp_path / "shadow.git"
    assert ShadowRepo(shadow, ws, Limits(max_files=2)).snapshot().reason == "the workspace has over 2 files"
    assert "MiB" in ShadowRepo(shadow, ws, Limits(max_bytes=2000)).snapshot().reason
    too_slow = ShadowRepo(shadow, ws, Limits(seconds=0)).snapshot()
    assert too_slow.commit is None and "longer than" in too_slow.reason
    # Each try would cost the whole budget before a command: later ones are skipped at once, and the git that
    # was stopped left no lock behind to break them for good.
    again = ShadowRepo(shadow, ws).snapshot()
    assert again.commit is None and "earlier today" in again.reason
    assert not list((shadow / "indexes").glob("*.lock"))
    home = ShadowRepo(shadow, Path.home().resolve()).snapshot()
    assert home.commit is None and "home folder" in home.reason
    assert ShadowRepo(shadow, Path("/")).snapshot().reason == "the workspace is the root folder"


def test_a_first_snapshot_over_the_budget_finishes_in_the_background(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A big workspace's first snapshot reads every file: the command it precedes is not held up past the
    budget (that snapshot is lost, and said so), but the work goes on, so the next snapshot is quick."""
    import time

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("f")
    real = ShadowRepo._git

    def slow_add(self: ShadowRepo, *args: str, **kw: object) -> bytes:
        if args[0] == "add":
            time.sleep(1.5)
        return real(self, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(ShadowRepo, "_git", slow_add)
    repo = ShadowRepo(tmp_path / "shadow.git", ws, Limits(seconds=0.5))
    first = repo.snapshot()
    assert first.commit is None and "goes on in the background" in first.reason
    assert "still being made" in repo.snapshot().reason  # the index is busy; nothing waits past the budget
    monkeypatch.setattr(ShadowRepo, "_git", real)
    deadline = time.monotonic() + 20
    while (later := ShadowRepo(tmp_path / "shadow.git", ws, Limits(seconds=0.5)).snapshot()).commit is None:
        assert time.monotonic() < deadline, later.reason
        time.sleep(0.2)
    assert later.files == 1


def test_one_repository_serves_every_session_and_workspace(tmp_path: Path) -> None:
    """Two workspaces in one snapshot repository: each has its own index, and content is stored once."""
    shared = tmp_path / "snapshots.git"
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "same.txt").write_text("identical content")
        assert ShadowRepo(shared, tmp_path / name).snapshot().commit
    assert len(list((shared / "indexes").iterdir())) == 2
    objects = subprocess.run(["git", "--git-dir", str(shared), "cat-file", "--batch-all-objects", "--batch-check"],
                             capture_output=True, text=True, check=True).stdout.split()
    assert objects.count("blob") == 1 and objects.count("tree") == 1  # the same content is stored once


def test_gitignore_is_respected_and_the_repository_top_is_the_root(tmp_path: Path) -> None:
    ws = tmp_path / "repo"
    (ws / "src" / "pkg").mkdir(parents=True)
    (ws / ".git").mkdir()  # a repository: commands in a subfolder snapshot the whole of it
    (ws / ".gitignore").write_text("node_modules/\n*.log\n")
    (ws / "node_modules").mkdir()
    (ws / "node_modules" / "dep.js").write_text("x")
    (ws / "app.log").write_text("x")
    (ws / "src" / "pkg" / "mod.py").write_text("x")
    root = project_root(ws / "src" / "pkg")
    assert root == ws.resolve()
    snap = ShadowRepo(tmp_path / "shadow.git", root).snapshot()
    assert snap.files == 2  # .gitignore and mod.py; not the ignored ones, not .git


def test_undo_goes_on_past_a_path_it_cannot_restore(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One path failing on disk is listed as NOT restored; the others are still put back."""
    from swebash_ai.tools import checkpoints, snapshots

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a")
    (ws / "b.txt").write_text("b")
    store = checkpoints.Checkpoints(tmp_path / "sessions" / "s1.checkpoints", turn=1)
    entry = store.before_command("rm a.txt b.txt", ws)
    (ws / "a.txt").unlink()
    (ws / "b.txt").unlink()
    store.after_command(entry)
    real = snapshots.restore

    def flaky(repo: ShadowRepo, path: Path, *args: object) -> str:
        if path.name == "a.txt":
            raise PermissionError(13, "Permission denied")
        return real(repo, path, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(snapshots, "restore", flaky)
    result = checkpoints.undo_last_turn(store)
    assert result.failed == 1 and (ws / "b.txt").read_text() == "b" and not (ws / "a.txt").exists()
    assert "could NOT be restored" in result.summary() and "a.txt: NOT restored" in result.summary()


def test_the_model_hears_the_gist_of_a_large_undo() -> None:
    from swebash_ai.tools.checkpoints import UndoResult

    result = UndoResult(3, [f"/w/f{i}.txt: restored (1 bytes)" for i in range(500)])
    note = result.note_for_model()
    assert "f19.txt" in note and "f20.txt" not in note and "and 480 more" in note and len(note) < 2_000
