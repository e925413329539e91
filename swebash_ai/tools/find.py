"""Find files by name: ``find_files``, glob patterns with ``**`` over a tree, newest first.

Contract:
    ``find_files(pattern, path=".", max_results=200, include_ignored=False)`` walks ``path`` and answers
    with the matching files, one path a line, sorted by modification time (newest first: what changed last
    is usually what the task is about), then a note with how many more matched beyond ``max_results``.
    A pattern without ``/`` matches the file name at any depth (``*.py``); with ``/`` it matches the path
    relative to ``path``, where ``**`` stands for any number of directories, none included
    (``src/**/test_*.py``); ``{a,b}`` alternatives are accepted. Its policy is the path policy's ``list``
    verdict on the root (ask outside the workspace).

Safety (never an oracle for secrets):
    The walk is ``search``'s: every entry judged by :class:`~swebash_ai.tools.guard.PolicyGate` (protected
    files are never listed nor counted), directories opened relative to their parent's descriptor with
    ``O_NOFOLLOW``, symlinks leaving the tree skipped, symlinked directories not followed, hard links
    judged like their protected twin. ``.git``/``.hg``/``.svn`` are never entered.

Ignores:
    ``.gitignore`` files are honoured by default (those of the walked directories, and those above the
    root up to the repository's top, each applied relative to its own directory; a deeper file overrides,
    as in git), so build output and ``node_modules`` do not drown the answer. ``include_ignored`` lists
    them too. A directory asked for by name that a ``.gitignore`` above it ignores (``path="build"``, a
    checkout inside an ignored folder) is listed anyway: only its own and deeper ``.gitignore`` files apply.
    A ``.gitignore`` is read through :func:`~swebash_ai.safety.unasked.read_unasked`, like every file the
    app reads by itself, and only when it is not a symbolic link (git does not follow one either).
"""

from __future__ import annotations

import asyncio
import os
import re
import stat
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from swebash_ai.safety.paths import PathRefused
from swebash_ai.safety.unasked import UnaskedText, read_unasked
from swebash_ai.storage.pending_writes import is_temporary
from swebash_ai.tools.guard import (
    DIR_FLAGS,
    PolicyGate,
    denial_message,
    path_check,
    path_policy_of,
    path_session_key,
    subfolders,
)
from swebash_ai.tools.registry import JSON, Tool, ToolContext, ToolResult, tool
from swebash_ai.tools.search import SKIP_DIRS

if TYPE_CHECKING:
    import pathspec

__all__ = ["TOOLS", "find_files", "glob_to_regex"]

_TIME_BUDGET = 30.0
_MAX_ENTRIES = 500_000
"""Entries looked at before the walk stops (a bound on a tree like ``/``, not on a real project)."""
_MAX_DEPTH = 128
_MAX_IGNORE_BYTES = 1 << 20


# --- patterns ------------------------------------------------------------------------------------------
def _class(pattern: str, i: int) -> tuple[str, int] | None:
    """A ``[...]`` character class starting at ``pattern[i]``: (regex, index after it), or None."""
    j = i + 1
    if j < len(pattern) and pattern[j] in "!^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    while j < len(pattern) and pattern[j] != "]":
        j += 1
    if j >= len(pattern):
        return None
    body = pattern[i + 1 : j].replace("\\", "\\\\")
    if body[:1] in ("!", "^"):
        body = "^" + body[1:]
    return f"(?!/)[{body}]", j + 1


def _translate(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**", i):
            at_start = i == 0 or pattern[i - 1] == "/"
            if at_start and pattern.startswith("**/", i):
                out.append("(?:.*/)?")
                i += 3
                continue
            if at_start and i + 2 == n:
                out.append(".*")
                i += 2
                continue
            out.append("[^/]*")  # "a**b" is not a directory wildcard: same as "*"
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[" and (cls := _class(pattern, i)) is not None:
            out.append(cls[0])
            i = cls[1]
            continue
        elif c == "{" and (end := pattern.find("}", i)) > i and "{" not in pattern[i + 1 : end]:
            alternatives = pattern[i + 1 : end].split(",")
            out.append("(?:" + "|".join(_translate(a) for a in alternatives) + ")")
            i = end + 1
            continue
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """The compiled regex for a glob over ``/``-separated relative paths (``**/`` = any directories)."""
    return re.compile(r"(?s:" + _translate(pattern) + r")\Z")


def _check_pattern(pattern: str) -> str | None:
    """Why a pattern cannot be used, or None."""
    if pattern.startswith("/") or pattern.startswith("~"):
        return "the pattern is relative to path: pass the directory as path and a relative pattern"
    if ".." in pattern.split("/"):
        return "'..' is not allowed in the pattern: pass the parent directory as path instead"
    return None


# --- ignores -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Ignore:
    """One ``.gitignore``: its patterns, applied to paths relative to the directory that holds it."""

    spec: pathspec.GitIgnoreSpec
    strip: str
    """Prefix of walk-relative paths that lie below the file's directory ("" above the root)."""
    prepend: str
    """The walk root relative to the file's directory ("" for files at or below the root)."""

    def verdict(self, rel: str, is_dir: bool) -> bool | None:
        """True: ignored, False: re-included by a ``!`` rule, None: no rule of this file applies."""
        path = (self.prepend + rel[len(self.strip) :]).rstrip("/") + ("/" if is_dir else "")
        return self.spec.check_file(path).include


def _read_ignore(path: str, gate: PolicyGate) -> pathspec.GitIgnoreSpec | None:
    """The patterns of the ``.gitignore`` at ``path``, read through the one door for files no tool call
    names (:func:`~swebash_ai.safety.unasked.read_unasked`: the policy on the written and the resolved path,
    ``O_NOFOLLOW``, regular files only, the descriptor's (device, inode) against the protected files, whole
    or nothing, a private key refused). Its patterns decide what the listing shows, so a protected file
    read as a ``.gitignore`` would leak through what is hidden.

    By path, not relative to the walk's directory descriptor: a directory swapped meanwhile can only make
    this read another file that passed every check, which changes the listing, never what is read.
    A symbolic link is not followed, as git does not follow one (since 2.32): the caller skips it.
    """
    read = read_unasked(Path(path), gate.policy, max_bytes=_MAX_IGNORE_BYTES)
    if not isinstance(read, UnaskedText):
        return None
    import pathspec  # not at import: 8-10 ms, for a tree that has a .gitignore

    try:
        return pathspec.GitIgnoreSpec.from_lines(read.text.splitlines())
    except Exception:  # a malformed line must not stop the listing; git skips such patterns too
        return None


def _not_a_link(entry: os.DirEntry[str]) -> bool:
    try:
        return not entry.is_symlink()
    except OSError:  # gone meanwhile
        return False


def _ignores_above(root: str, gate: PolicyGate) -> list[_Ignore]:
    """The ``.gitignore`` files between the repository's top (the nearest ``.git`` above) and ``root``."""
    chain: list[str] = []
    current = Path(root)
    for parent in [current, *current.parents]:
        chain.append(str(parent))
        if (parent / ".git").exists():
            break
    else:
        return []  # not in a repository: only the tree's own .gitignore files apply
    found: list[_Ignore] = []
    for directory in reversed(chain[1:]):  # the top first, so deeper files are judged later and win
        path = os.path.join(directory, ".gitignore")
        spec = None if os.path.islink(path) else _read_ignore(path, gate)
        if spec is not None:
            prepend = os.path.relpath(root, directory).replace(os.sep, "/") + "/"
            found.append(_Ignore(spec, "", prepend))
    return found


def _ignored(ignores: list[_Ignore], rel: str, is_dir: bool) -> bool:
    result = False
    for ignore in ignores:  # the last file with a rule about this path decides, as in git
        said = ignore.verdict(rel, is_dir)
        if said is not None:
            result = said
    return result


# --- the walk ------------------------------------------------------------------------------------------
@dataclass
class _Outcome:
    found: list[tuple[float, str]] = field(default_factory=list)
    looked_at: int = 0
    ignored: int = 0
    root_ignored: bool = False
    links_out: int = 0
    unreadable: int = 0
    stopped: str = ""


class _Find:
    def __init__(self, regex: re.Pattern[str], by_name: bool, gate: PolicyGate, use_ignores: bool,
                 stop: threading.Event) -> None:
        self.regex = regex
        self.by_name = by_name
        self.gate = gate
        self.use_ignores = use_ignores
        self.stop = stop
        self.deadline = time.monotonic() + _TIME_BUDGET
        self.out = _Outcome()
        self.root = ""

    def run(self, root: Path) -> _Outcome:
        self.root = str(root)
        ignores = _ignores_above(self.root, self.gate) if self.use_ignores else []
        if _ignored(ignores, "", True):  # asked for by name: the rules above would hide all of it
            ignores, self.out.root_ignored = [], True
        fd = os.open(self.root, DIR_FLAGS)
        try:
            self._walk(fd, self.root, "", 0, ignores)
        finally:
            os.close(fd)
        return self.out

    def _should_stop(self) -> bool:
        if self.stop.is_set():
            self.out.stopped = "cancelled"
        elif time.monotonic() > self.deadline:
            self.out.stopped = f"time limit of {_TIME_BUDGET:.0f} s reached"
        elif self.out.looked_at > _MAX_ENTRIES:
            self.out.stopped = f"{_MAX_ENTRIES} entries looked at"
        return bool(self.out.stopped)

    def _matches(self, rel: str) -> bool:
        return self.regex.match(rel.rsplit("/", 1)[-1] if self.by_name else rel) is not None

    def _walk(self, dir_fd: int, dir_abs: str, rel: str, depth: int, ignores: list[_Ignore]) -> None:
        try:
            with os.scandir(dir_fd) as it:
                entries = list(it)
        except OSError:
            self.out.unreadable += 1
            return
        if self.use_ignores and any(e.name == ".gitignore" and _not_a_link(e) for e in entries):
            spec = _read_ignore(f"{dir_abs}/.gitignore" if dir_abs != "/" else "/.gitignore", self.gate)
            if spec is not None:
                ignores = [*ignores, _Ignore(spec, rel, "")]
        full = self.gate.full_check_below(dir_abs)
        subdirs: list[tuple[str, str, str]] = []
        for entry in entries:
            if self.out.stopped or self._should_stop():
                return
            self.out.looked_at += 1
            name = entry.name
            abs_path = f"{dir_abs}/{name}" if dir_abs != "/" else f"/{name}"
            erel = rel + name
            if self.gate.denied(abs_path, name, full) or is_temporary(name):  # never an atomic write's temporary
                continue
            try:
                is_link = entry.is_symlink()
                is_dir = not is_link and entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if self.use_ignores and _ignored(ignores, erel, is_dir):
                self.out.ignored += 1
                continue
            if is_dir:
                if name not in SKIP_DIRS:
                    subdirs.append((name, abs_path, erel))
            elif is_link:
                self._link(abs_path, erel)
            elif self._matches(erel):
                self._file(entry, abs_path, erel)
        if depth >= _MAX_DEPTH:
            return
        for sub, abs_path, erel in subfolders(dir_fd, subdirs, self.out):
            self._walk(sub, abs_path, erel + "/", depth + 1, ignores)

    def _file(self, entry: os.DirEntry[str], abs_path: str, rel: str) -> None:
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            return
        if not stat.S_ISREG(st.st_mode):
            return  # FIFOs, sockets and devices are not what "files" means here
        if st.st_nlink > 1 and self.gate.read_denied(abs_path):
            return  # a hard link to a protected file
        self.out.found.append((st.st_mtime, rel))

    def _link(self, abs_path: str, rel: str) -> None:
        target = os.path.realpath(abs_path)
        if not Path(target).is_relative_to(self.root) or target == self.root:
            self.out.links_out += 1
            return
        if not self._matches(rel) or self.gate.read_denied(target):
            return
        try:
            st = os.stat(target)
        except OSError:
            return
        if stat.S_ISREG(st.st_mode):  # a linked directory is listed where it really is
            self.out.found.append((st.st_mtime, rel))


# --- the tool ------------------------------------------------------------------------------------------
def _shown_path(path: str, rel: str) -> str:
    """The path as the model can pass it to read_file: relative to the working directory when it was."""
    base = path.rstrip("/")
    return rel if base in ("", ".") else f"{base}/{rel}"


def _render(pattern: str, path: str, out: _Outcome, max_results: int, include_ignored: bool) -> ToolResult:
    found = sorted(out.found, key=lambda f: (-f[0], f[1]))
    total = len(found)
    head = (f"{total} file{'s' * (total != 1)} matching {pattern!r} under {path}, newest first "
            "(sorted by modification time)")
    lines = [head + (":" if total else ".")]
    lines += [_shown_path(path, rel) for _mtime, rel in found[:max_results]]
    if total > max_results:
        lines.append(f"[{total - max_results} more not shown (max_results={max_results}); narrow the pattern "
                     "or the path]")
    notes = []
    if out.ignored and not include_ignored:
        notes.append(f"{out.ignored} entries ignored by .gitignore (include_ignored=true lists them)")
    if out.root_ignored:
        notes.append(f"{path} itself is ignored by a .gitignore above it; listed anyway, with its own ignores")
    if out.links_out:
        notes.append(f"{out.links_out} symlinks leaving the tree skipped")
    if out.unreadable:
        notes.append(f"{out.unreadable} unreadable directories")
    if notes:
        lines.append("[" + "; ".join(notes) + "]")
    if out.stopped:
        lines.append(f"[stopped early ({out.stopped}): the list is incomplete]")
    if not total and "/" not in pattern and not pattern.startswith("*"):
        lines.append(f"Hint: a pattern is a whole-name glob; try '*{pattern}*' to match part of a name.")
    return ToolResult.success(
        "\n".join(lines),
        truncated=total > max_results or bool(out.stopped),
        metadata={"files": total, "shown": min(total, max_results)},
    )


def _describe(args: Any) -> str:
    return f"find files {args.pattern!r} under {args.path}"


@tool("fs", policy=path_check("list"), describe=_describe, session_key=path_session_key("find_files"))
async def find_files(
    ctx: ToolContext,
    pattern: Annotated[str, Field(min_length=1, max_length=500)],
    path: str = ".",
    max_results: Annotated[int, Field(ge=1, le=1000)] = 200,
    include_ignored: bool = False,
) -> ToolResult | JSON:
    """Find files by name with a glob pattern, newest first (sorted by modification time).

    A pattern without "/" matches file names at any depth ("*.py", "Dockerfile*"); with "/" it matches
    the path relative to path, "**" standing for any number of directories ("src/**/test_*.py",
    "**/*.{ts,tsx}"). Skips .git, files ignored by .gitignore (unless include_ignored), symlinks leaving
    the tree and protected files. Says how many more matched beyond max_results.

    Args:
        pattern: Glob pattern: * and ? within a name, ** across directories, [abc] and {a,b} alternatives.
        path: Directory to search, relative to the working directory.
        max_results: Most paths to list (all are counted).
        include_ignored: Also list files that .gitignore excludes (build output, node_modules...).
    """
    problem = _check_pattern(pattern)
    if problem is not None:
        return ToolResult.error(f"Invalid pattern {pattern!r}: {problem}.")
    policy = path_policy_of(ctx)
    verdict = policy.check(path, "list", str(ctx.cwd))
    if verdict.decision == "deny":
        return ToolResult.denied(denial_message(path, verdict), metadata={"rule": verdict.rule})
    try:
        root = policy.resolve(path, str(ctx.cwd))
    except PathRefused as exc:
        return ToolResult.denied(f"Path '{path}' refused: {exc}.")
    if root.is_file():
        return ToolResult.error(f"'{path}' is a file, not a directory. Pass the directory that holds it.")
    clean = pattern[2:] if pattern.startswith("./") else pattern
    stop = threading.Event()
    job = _Find(glob_to_regex(clean), "/" not in clean, PolicyGate(policy), not include_ignored, stop)
    try:
        out = await asyncio.to_thread(job.run, root)
    except FileNotFoundError:
        return ToolResult.error(f"'{path}' not found. List the directory first (list_dir).")
    except NotADirectoryError:
        return ToolResult.error(f"'{path}' is not a directory.")
    except OSError as exc:
        return ToolResult.error(f"Cannot list '{path}': {exc.strerror or exc}.")
    finally:
        stop.set()  # a cancelled call stops the worker thread at the next entry
    return _render(pattern, path, out, max_results, include_ignored)


TOOLS: list[Tool] = [find_files]
