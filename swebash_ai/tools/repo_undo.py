"""Undoing a nested repository a sandboxed command created: what the snapshots of a command cannot see.

Contract:
    The check after a confined run (``sandbox/planted.py``) keeps a new nested repository whose config runs
    nothing, and the command's record names it (``new_repos``). The snapshots leave every ``.git`` folder out,
    and git stores such a folder as a link to another repository, so the files in it are not snapshotted either.
    :func:`remove` takes it away at undo: its ``.git``, and the whole folder when nothing in it is older than the
    command (everything there is the command's); else only the ``.git``, and it says that the files stay.
    :func:`unchanged_since` tells whether the repository is as the command left it (nothing in its ``.git``
    changed after the command's end): a commit made there since is not thrown away without ``--force``.
    Neither follows a link: a path recorded resolved that is a link now is left alone, and said so.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

__all__ = ["MOST_ENTRIES", "SLACK", "remove", "unchanged_since"]

MOST_ENTRIES = 20_000
"""Most entries of a folder looked at (a clone's ``.git`` can be large): past it, it counts as changed or old."""
SLACK = 1.0
"""Seconds a file may seem older than the command's start and still be the command's: the kernel stamps files
with a coarse clock, which can lag the one the start was read from."""


def _entries(top: Path) -> tuple[list[os.stat_result], bool]:
    """The lstat of each entry below ``top`` (links not followed); ``True`` when cut at :data:`MOST_ENTRIES`."""
    found: list[os.stat_result] = []
    for folder, dirs, files in os.walk(top, followlinks=False):
        for name in [*dirs, *files]:
            try:
                found.append(os.lstat(os.path.join(folder, name)))
            except OSError:
                continue
            if len(found) >= MOST_ENTRIES:
                return found, True
    return found, False


def unchanged_since(repo: Path, ended: float) -> bool:
    """Whether nothing in ``repo/.git`` changed after ``ended`` (the command's end; 0: not recorded)."""
    git = repo / ".git"
    if not ended or not os.path.isdir(git) or os.path.islink(git):
        return True
    entries, cut = _entries(git)
    try:
        top = os.lstat(git).st_mtime
    except OSError:
        return True
    return not cut and top <= ended and all(st.st_mtime <= ended for st in entries)


def remove(root: Path, repo: Path, started: float) -> str:
    """Take away the repository at ``repo`` (inside ``root``) a command started at ``started`` created; one
    line for undo's summary."""
    if repo == root or not repo.is_relative_to(root) or os.path.realpath(repo) != str(repo):
        return "NOT removed (its folder is outside the workspace, or a link now)"
    git = repo / ".git"
    if not os.path.lexists(git):
        return "already gone"
    if os.path.islink(git) or not os.path.isdir(git):
        git.unlink()
    else:
        shutil.rmtree(git)
    entries, cut = _entries(repo)
    older = cut or any(st.st_mtime < started - SLACK for st in entries)
    if older:
        return "removed (the repository the command created); the files in its folder stay: some are older"
    shutil.rmtree(repo)
    return f"removed with its folder ({len(entries)} entries), all of them the command's"
