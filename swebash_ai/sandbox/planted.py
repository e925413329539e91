"""After a confined command: what it left for git or swebash-ai to run later on the host, put back.

Contract:
    :func:`before` records, in a policy's writable roots, every file git or swebash-ai reads that makes them run
    a program later (each git folder's ``config``, ``config.worktree``, ``commondir``, the files of ``hooks/``,
    ``info/``, ``modules/`` and ``worktrees/``; the root's ``.swebash-ai/``) and the nested repositories there
    are. :func:`after` compares: what changed gets its old bytes back, what is new is removed, and a new nested
    repository (a ``.git`` anywhere below a root) is kept when its config and hooks run nothing, its ``.git``
    removed when they would (``core.fsmonitor`` runs at the user's next ``git status`` in the parent). It
    returns one line per finding, for the command's result.

Why a second wall: under bubblewrap the same paths are read-only mounts, and the missing git folders are sealed,
but a missing *file* cannot be: its mount point would stay on the disk (an empty ``.git/commondir`` breaks every
git command). Under Landlock, which grants by folder tree, nothing inside the workspace is protected: this is
the wall. The window between the write and the check is the command's own run.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from swebash_ai.sandbox.policy import WALK_LIMIT, _walk_workspace, git_dirs
from swebash_ai.sandbox.view import within

if TYPE_CHECKING:
    from swebash_ai.safety.paths import PathPolicy
    from swebash_ai.sandbox.policy import SandboxPolicy

__all__ = ["Watch", "after", "before", "runs_programs", "unknown_keys"]

_MAX_BYTES = 1 << 20  # a file git runs code from is small; a larger one is checked by size and time only
_FILES = ("config", "config.worktree", "commondir")
_FOLDERS = ("hooks", "info", "modules", "worktrees")
_LIMIT = 2_000  # files per git folder looked at


@dataclass(frozen=True)
class Watch:
    """The watched files (path -> bytes, ``None`` when absent or too large to keep) and nested repositories."""

    files: dict[Path, bytes | None]
    absent: frozenset[Path]
    repos: frozenset[Path]
    own: dict[Path, bool]
    """Each root's ``.swebash-ai``: whether it existed."""
    links: frozenset[Path] = frozenset()
    """The symbolic links (below a root) on the way to a watched file: the ones that were there before."""
    kept: list[Path] = field(default_factory=list)
    """Filled by :func:`after`: the new nested repositories it kept (their config runs nothing), for undo."""


def _watched(roots: tuple[Path, ...]) -> list[Path]:
    paths: list[Path] = []
    for root in roots:
        _ro, _pin, folders = git_dirs(root)
        for folder in dict.fromkeys(folders):
            paths += [folder / n for n in _FILES]
            for sub in _FOLDERS:
                top = folder / sub
                if top.is_dir():
                    paths += [p for p in _files_under(top)][:_LIMIT]
        own = root / ".swebash-ai"
        if own.is_dir():
            paths += list(_files_under(own))[:_LIMIT]
    return paths


def _files_under(top: Path) -> list[Path]:
    out: list[Path] = []
    for folder, dirs, names in os.walk(top):
        dirs[:] = [d for d in dirs if d != "objects"]  # a submodule's objects run nothing
        out += [Path(folder, n) for n in names]
        if len(out) > _LIMIT:
            break
    return out


def _read(p: Path) -> bytes | None:
    try:
        if p.is_symlink():
            return b"symlink:" + os.readlink(p).encode()
        if p.stat().st_size > _MAX_BYTES:
            return None
        return p.read_bytes()
    except OSError:
        return None


def _repos(paths: PathPolicy, roots: tuple[Path, ...]) -> frozenset[Path]:
    return frozenset(_walk_workspace(paths, roots, WALK_LIMIT)[1])


def before(policy: SandboxPolicy, paths: PathPolicy) -> Watch:
    """What the files git and swebash-ai run code from hold now (see the module docstring)."""
    roots = policy.writable
    files: dict[Path, bytes | None] = {}
    absent: set[Path] = set()
    for p in _watched(roots):
        if os.path.lexists(p):
            files[p] = _read(p)
        else:
            absent.add(p)
    repos = frozenset(policy.repos) if policy.repos is not None else _repos(paths, roots)  # the walk just made
    return Watch(files, frozenset(absent), repos, {r: (r / ".swebash-ai").exists() for r in roots},
                 _links([*files, *absent], roots))


def _links(paths: list[Path], roots: tuple[Path, ...]) -> frozenset[Path]:
    """The symbolic links below a root on the way to ``paths``: the put-back runs on the host, and what it
    removes or writes through a link the command made is somewhere else (a folder of the user's)."""
    seen: set[Path] = set()
    found: set[Path] = set()
    for p in paths:
        for up in p.parents:
            if up in seen or not any(up != r and within(up, r) for r in roots):
                continue
            seen.add(up)
            if up.is_symlink():
                found.add(up)
    return frozenset(found)


# The keys a new repository's config may hold: what `git init`, `git clone`, `cargo new` and `git remote add`
# write. Anything else (core.fsmonitor, core.hooksPath, core.sshCommand, diff.external, filters, aliases,
# include...) is refused: a list of what is allowed, not of what runs programs.
_CONFIG_ALLOWED: dict[str, frozenset[str]] = {
    "core": frozenset({"repositoryformatversion", "filemode", "bare", "logallrefupdates", "ignorecase",
                       "precomposeunicode", "symlinks", "autocrlf", "eol", "safecrlf", "quotepath"}),
    "remote": frozenset({"url", "fetch", "pushurl", "tagopt", "prune"}),
    "branch": frozenset({"remote", "merge", "rebase"}),
    "submodule": frozenset({"url", "active", "path", "branch"}),
    "user": frozenset({"name", "email"}),
    "init": frozenset({"defaultbranch"}),
    "extensions": frozenset({"objectformat"}),
    "gc": frozenset({"auto"}),
    "pull": frozenset({"rebase", "ff"}),
    "fetch": frozenset({"prune"}),
}
_SECTION = re.compile(r"\s*\[\s*([A-Za-z0-9.-]+)(?:\s+\"[^\"]*\")?\s*\]")
_KEY = re.compile(r"\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=|$)")


def unknown_keys(text: str) -> list[str]:
    """The keys of a git config ``text`` outside :data:`_CONFIG_ALLOWED` (and anything git would read that this
    small parser does not understand)."""
    found: list[str] = []
    section = ""
    for line in text.splitlines():
        head = _SECTION.match(line)
        if head:
            section = head.group(1).lower().split(".")[0]
            line = line[head.end():]
        body = line.strip()
        if not body or body.startswith(("#", ";")):
            continue
        key = _KEY.match(line)
        name = key.group(1).lower() if key else body[:20]
        if key is None or name not in _CONFIG_ALLOWED.get(section, frozenset()):
            found.append(f"{section}.{name}")
    return found


def runs_programs(gitdir: Path) -> list[str]:
    """What in a git folder may make git run a program: config keys outside the allowed ones
    (``core.fsmonitor``, ``include``, aliases...), hooks other than git's ``*.sample`` files, a ``commondir``."""
    found: list[str] = []
    for name in _FILES[:2]:
        try:
            text = (gitdir / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        found += unknown_keys(text)
    hooks = gitdir / "hooks"
    if hooks.is_dir():
        found += [f"hooks/{p.name}" for p in hooks.iterdir() if not p.name.endswith(".sample")]
    if (gitdir / "commondir").exists():
        found.append("commondir")
    return list(dict.fromkeys(found))


def _target(link: Path) -> str:
    try:
        return os.readlink(link)
    except OSError:
        return "?"


def _remove(p: Path) -> None:
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p, ignore_errors=True)
    else:
        p.unlink(missing_ok=True)


def after(watch: Watch, policy: SandboxPolicy, paths: PathPolicy) -> list[str]:
    """Put back what the command changed of the watched files and refuse a new repository that runs programs;
    one line per finding (empty: nothing was planted)."""
    roots = policy.writable
    lines: list[str] = []
    now = set(_watched(roots)) | set(watch.files) | set(watch.absent)
    for link in sorted(_links(sorted(now), roots) - watch.links):  # only the link goes, never what it points to
        target = _target(link)
        link.unlink(missing_ok=True)
        lines.append(f"{link} was a link made by the command to {target}: removed")
    if lines:
        now = set(_watched(roots)) | set(watch.files) | set(watch.absent)
    for p in sorted(now):
        existed, exists = p in watch.files, os.path.lexists(p)
        old = watch.files.get(p)
        if not existed and not any(within(os.path.realpath(p), r) for r in roots):
            continue  # reached through a pointer the command wrote (a .git file): not the command's to lose
        if not existed and exists:
            _remove(p)
            lines.append(f"{p} was created by the command and removed: git or swebash-ai would run it later")
        elif existed and old is not None and _read(p) != old:
            if exists:
                _remove(p)
            p.parent.mkdir(parents=True, exist_ok=True)
            if old.startswith(b"symlink:"):
                os.symlink(old[len(b"symlink:"):].decode(), p)
            else:
                p.write_bytes(old)
            lines.append(f"{p} was {'changed' if exists else 'removed'} by the command and put back")
    for root, had in watch.own.items():
        own = root / ".swebash-ai"
        if not had and own.exists():
            _remove(own)
            lines.append(f"{own} was created by the command and removed: project settings are the user's")
    for repo in sorted(_repos(paths, roots) - watch.repos):
        dot = repo / ".git"
        why = runs_programs(dot) if dot.is_dir() else ["a .git file pointing elsewhere"]
        if why:
            _remove(dot)
            lines.append(f"a new repository at {repo} was refused, its .git removed: it would run programs at "
                         f"your next git command there or in the repository above ({', '.join(why)})")
        else:
            watch.kept.append(repo)
            lines.append(f"a new repository was created at {repo} (its config and hooks run nothing; undo removes "
                         "it)")
    return lines
