"""Search file contents: ``search``, a literal or regex search over a tree, grouped by file.

Contract:
    ``search(pattern, path=".", ...)`` walks ``path`` (a directory, or one file) and answers with the
    matching lines grouped by file (``  12: text``, context lines ``  11- text``, ``--`` between groups),
    the total number of matching lines and files, and a note when the output was cut at ``max_results``.
    Its policy is the path policy's ``list`` verdict on the root (ask outside the workspace).

Safety (never an oracle for secrets):
    Every entry is judged by the :class:`~swebash_ai.safety.paths.PathPolicy` rules ``read_file`` uses
    (see :class:`PolicyGate`); denied files are skipped silently and never counted, so a search cannot
    say whether ``.env`` holds a word.  Symlinks are never followed: a file or directory one points to
    inside the tree is searched where it really is (no loops, no duplicates), one leaving the tree is
    counted as skipped.
    Directories are opened relative to their parent's descriptor with ``O_NOFOLLOW`` (a directory
    swapped for a symlink mid-walk leads nowhere); files with ``O_NOFOLLOW|O_NONBLOCK``, regular only.

Matching a file is :mod:`swebash_ai.tools.search_match`.

Speed (see ``bench/search_speed.py``): where ripgrep is available, it proposes the candidate files and
only those are read here (:mod:`swebash_ai.tools.search_rg`: same policy, same matcher, same output).
Otherwise, or for a regex with no literal to look for, the walk (not slower than ``grep -r``):
    ``os.scandir`` on descriptors, entries taken in inode order (fewer disk seeks when cold; the answer is
    sorted by path); each file read whole as bytes in one read (over ``fs_max_size``:
    skipped; a NUL in the first 8 KiB: binary, skipped); the pattern found on the whole buffer with
    ``bytes.find`` (after ``bytes.lower`` when case-insensitive) or one precompiled bytes regex behind a
    literal prefilter; only files that match pay for line numbers.  The walk runs in a worker thread (the
    event loop stays responsive) and stops when the call is cancelled or after a time budget.  Non-ASCII
    patterns searched case-insensitively, and ``str``-only regexes, decode each file instead.
"""

from __future__ import annotations

import asyncio
import fnmatch
import os
import re
import stat
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from swebash_ai.safety.secrets import blank_private_keys
from swebash_ai.storage.pending_writes import is_temporary
from swebash_ai.tools import search_rg
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
from swebash_ai.tools.search_match import Matcher, matching_line_starts

__all__ = ["TOOLS", "search"]

#: Version-control directories never searched.
SKIP_DIRS = frozenset({".git", ".hg", ".svn"})
_MAX_LINE_CHARS = 300
_MAX_OUTPUT_CHARS = 200_000
_TIME_BUDGET = 60.0
_MAX_DEPTH = 128
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@dataclass
class _FileHits:
    rel: str
    count: int
    lines: list[tuple[int, bool, str]]  # (line number, is a match, text); (0, False, "") is a "--" gap


@dataclass
class _Outcome:
    files: list[_FileHits] = field(default_factory=list)
    total_lines: int = 0
    total_files: int = 0
    shown: int = 0
    searched: int = 0
    binary: int = 0
    too_big: int = 0
    links_out: int = 0
    unreadable: int = 0
    stopped: str = ""


def _glob_hit(globs: list[str], rel: str, name: str) -> bool:
    return any(fnmatch.fnmatchcase(rel if "/" in g else name, g) for g in globs)


class _Search:
    def __init__(
        self,
        matcher: Matcher,
        gate: PolicyGate,
        *,
        max_size: int,
        include: list[str],
        exclude: list[str],
        context: int,
        max_results: int,
        stop: threading.Event,
        use_ripgrep: bool = True,
    ) -> None:
        self.m = matcher
        self.gate = gate
        self.max_size = max_size
        self.include = include
        self.exclude = [g.rstrip("/") for g in exclude]
        self.context = context
        self.max_results = max_results
        self.stop = stop
        self.deadline = time.monotonic() + _TIME_BUDGET
        self.use_ripgrep = use_ripgrep
        self.out = _Outcome()
        self.root_real = ""

    # -- walking -----------------------------------------------------------------------------------------
    def run(self, root: Path) -> _Outcome:
        """Search the tree at ``root`` (a resolved directory, or one regular file)."""
        st = os.stat(root)
        is_dir = stat.S_ISDIR(st.st_mode)
        if not (is_dir or stat.S_ISREG(st.st_mode)):
            raise OSError(0, "not a regular file or directory")
        self.root_real = str(root if is_dir else root.parent)
        fd = os.open(self.root_real, DIR_FLAGS)
        try:
            if is_dir:
                if not self._fast(fd, root):
                    self._walk(fd, self.root_real, "", 0)
            elif not self.gate.read_denied(str(root)):
                self._file(fd, root.name, root.name, str(root))
        finally:
            os.close(fd)
        return self.out

    def _fast(self, root_fd: int, root: Path) -> bool:
        """Search the candidates ripgrep proposes, each judged as the walk judges a file (see search_rg).
        False when ripgrep cannot be used here: the caller walks."""
        if not self.use_ripgrep:
            return False
        wanted = self.m.literal()
        if wanted is None:
            return False
        policy = self.gate.policy
        bases = [base for base, _why in getattr(policy, "deny_paths", [])]
        # A plain literal is matched line by line alike by ripgrep and by the matcher here, so ripgrep's counts
        # can stand for the files past what is shown (they need not be read again); a regex's are its literal's.
        counts = self.m.rx is None and not self.m.text_mode and "\n" not in wanted[0]
        found = search_rg.candidates(root, wanted[0], ignore_case=wanted[1], max_size=self.max_size,
                                     exclude=self.exclude, deny_bases=bases,
                                     deny_globs=list(getattr(policy, "deny_globs", [])), count=counts)
        if found is None:
            return False
        rels, self.out.searched = found
        root_abs = self.root_real.rstrip("/")
        dirs: dict[str, int | None] = {}  # folder (relative) -> descriptor, or None: not to be entered
        try:
            for rel in sorted(rels, key=lambda r: r.split("/")):  # path order: which lines are shown is stable
                if self._should_stop():
                    break
                folder, _, name = rel.rpartition("/")
                parent = self._folder(root_fd, root_abs, folder, dirs)
                if parent is None or not self._wanted(rel, name):
                    continue
                abs_path = f"{root_abs}/{rel}"
                if self.gate.denied(abs_path, name, self.gate.full_check_below(abs_path.rsplit("/", 1)[0])):
                    continue
                if counts and self.out.shown >= self.max_results:
                    if self._countable(parent, name, abs_path):
                        self.out.total_files += 1
                        self.out.total_lines += rels[rel]
                    continue
                searched = self.out.searched
                self._file(parent, name, rel, abs_path)
                self.out.searched = searched  # ripgrep's figure counts every file, not only the candidates
        finally:
            for fd in dirs.values():
                if fd is not None:
                    os.close(fd)
        return True

    def _countable(self, dir_fd: int, name: str, abs_path: str) -> bool:
        """Would the walk have read this file (a regular one within the size limit, not a hard link to a protected
        file)? For a file only counted, never shown."""
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            return False
        if not stat.S_ISREG(st.st_mode) or st.st_size > self.max_size:
            return False
        return not (st.st_nlink > 1 and self.gate.read_denied(abs_path))

    def _folder(self, root_fd: int, root_abs: str, folder: str, dirs: dict[str, int | None]) -> int | None:
        """A descriptor of ``folder`` (relative to the root), opened one ``O_NOFOLLOW`` step at a time from
        its parent's (a folder swapped for a symlink since ripgrep saw it leads nowhere) and judged as the
        walk judges a folder it descends into; ``None`` when it is not to be entered. Cached: candidates come
        in path order, so a folder is opened once."""
        if not folder:
            return root_fd
        if folder in dirs:
            return dirs[folder]
        if len(dirs) >= 256:  # bounded: close what earlier paths needed
            for old in dirs.values():
                if old is not None:
                    os.close(old)
            dirs.clear()
        above, _, name = folder.rpartition("/")
        parent = self._folder(root_fd, root_abs, above, dirs)
        fd: int | None = None
        dir_abs = f"{root_abs}/{above}" if above else root_abs
        if parent is not None and name not in SKIP_DIRS and not (
            self.gate.denied(f"{dir_abs}/{name}", name, self.gate.full_check_below(dir_abs or "/"))
            or (self.exclude and _glob_hit(self.exclude, folder, name))
        ):
            try:
                fd = os.open(name, DIR_FLAGS, dir_fd=parent)
            except OSError:
                self.out.unreadable += 1
        dirs[folder] = fd
        return fd

    def _walk(self, dir_fd: int, dir_abs: str, rel: str, depth: int) -> None:
        try:
            with os.scandir(dir_fd) as it:
                entries = sorted(it, key=lambda e: e.inode())  # disk order: cold reads seek less
        except OSError:
            self.out.unreadable += 1
            return
        full = self.gate.full_check_below(dir_abs)
        subdirs: list[tuple[str, str, str]] = []
        for entry in entries:
            if self.out.stopped or self._should_stop():
                return
            name = entry.name
            abs_path = f"{dir_abs}/{name}" if dir_abs != "/" else f"/{name}"
            erel = rel + name
            if self.gate.denied(abs_path, name, full):
                continue
            try:
                if entry.is_symlink():
                    self._link(abs_path, erel)
                    continue
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if name not in SKIP_DIRS and not (self.exclude and _glob_hit(self.exclude, erel, name)):
                    subdirs.append((name, abs_path, erel))
            elif self._wanted(erel, name):
                self._file(dir_fd, name, erel, abs_path)
        if depth >= _MAX_DEPTH:
            return
        for sub, abs_path, erel in subfolders(dir_fd, subdirs, self.out):
            self._walk(sub, abs_path, erel + "/", depth + 1)

    def _should_stop(self) -> bool:
        if self.stop.is_set():
            self.out.stopped = "cancelled"
        elif time.monotonic() > self.deadline:
            self.out.stopped = f"time limit of {_TIME_BUDGET:.0f} s reached"
        return bool(self.out.stopped)

    def _wanted(self, rel: str, name: str) -> bool:
        if is_temporary(name):  # an atomic write's temporary file: never the user's
            return False
        if self.include and not _glob_hit(self.include, rel, name):
            return False
        return not (self.exclude and _glob_hit(self.exclude, rel, name))

    def _link(self, abs_path: str, rel: str) -> None:
        """Symlinks are never followed: what one points to inside the tree is searched where it really is
        (once, like ripgrep does), and one that leaves the tree is counted as skipped."""
        target = os.path.realpath(abs_path)
        if not Path(target).is_relative_to(self.root_real) or target == self.root_real:
            self.out.links_out += 1

    # -- one file ----------------------------------------------------------------------------------------
    def _read(self, dir_fd: int, name: str, abs_path: str) -> bytes | None:
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
        except OSError:
            self.out.unreadable += 1
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return None
            if st.st_size > self.max_size:
                self.out.too_big += 1
                return None
            if st.st_nlink > 1 and self.gate.read_denied(abs_path):
                return None  # a hard link to a protected file
            data = os.read(fd, st.st_size + 1)  # one read, one right-sized buffer
            while len(data) > st.st_size and len(data) <= self.max_size:  # it grew meanwhile
                more = os.read(fd, self.max_size + 1 - len(data))
                if not more:
                    break
                data += more
        except OSError:
            self.out.unreadable += 1
            return None
        finally:
            os.close(fd)
        if len(data) > self.max_size:
            self.out.too_big += 1
            return None
        return data

    def _file(self, dir_fd: int, name: str, rel: str, abs_path: str) -> None:
        data = self._read(dir_fd, name, abs_path)
        if not data:
            return
        if b"\x00" in data[:8192]:
            self.out.binary += 1
            return
        data = blank_private_keys(data)  # a key's lines carry no header to be recognised by in the hits
        self.out.searched += 1
        m = self.m
        hay = m.haystack(data)
        if m.reject(data, hay):
            return
        out = self.out
        room = self.max_results - out.shown
        if room <= 0 and m.counter is not None:  # past max_results: only count
            out.total_files += 1
            out.total_lines += len(m.counter.findall(hay))
            return
        nl: Any = "\n" if m.text_mode else b"\n"
        starts = matching_line_starts(hay, nl, m.find)
        if not starts:
            return
        out.total_files += 1
        out.total_lines += len(starts)
        if room <= 0:
            return
        shown_starts = starts[:room]
        out.shown += len(shown_starts)
        display: Any = hay if m.text_mode else data
        numbers: list[int] = []
        line, prev = 1, 0
        for s in shown_starts:
            line += display.count(nl, prev, s)
            prev = s
            numbers.append(line)
        out.files.append(_FileHits(rel, len(starts), self._lines(display, nl, shown_starts, numbers)))

    def _lines(self, display: Any, nl: Any, starts: list[int], numbers: list[int]) -> list[tuple[int, bool, str]]:
        if not self.context:
            out = []
            for s, n in zip(starts, numbers, strict=True):
                end = display.find(nl, s)
                out.append((n, True, _text(display[s : end if end >= 0 else len(display)])))
            return out
        all_lines = display.split(nl)
        if all_lines and not all_lines[-1]:
            all_lines.pop()
        matches = set(numbers)
        result: list[tuple[int, bool, str]] = []
        last = 0
        for n in numbers:
            lo, hi = max(1, n - self.context, last + 1), min(len(all_lines), n + self.context)
            if last and lo > last + 1:
                result.append((0, False, ""))
            for k in range(lo, hi + 1):
                result.append((k, k in matches, _text(all_lines[k - 1])))
            last = max(last, hi)
        return result


def _text(raw: bytes | str) -> str:
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    text = text.rstrip("\r")
    return text if len(text) <= _MAX_LINE_CHARS else text[:_MAX_LINE_CHARS] + " …[line cut]"


def _render(pattern: str, path: str, out: _Outcome, max_results: int) -> ToolResult:
    head = (
        f"{out.total_lines} matching line{'s' * (out.total_lines != 1)} in {out.total_files} "
        f"file{'s' * (out.total_files != 1)} for {pattern!r} under {path} ({out.searched} files searched)"
    )
    notes = []
    if out.total_lines > out.shown:
        notes.append(
            f"showing the first {out.shown} matching lines (max_results={max_results}); narrow it with a "
            "more specific pattern, a subdirectory, or include globs"
        )
    skipped = [
        f"{n} {what}"
        for n, what in (
            (out.binary, "binary"),
            (out.too_big, "over the fs_max_size limit"),
            (out.links_out, "symlinks leaving the tree"),
            (out.unreadable, "unreadable"),
        )
        if n
    ]
    if skipped:
        notes.append("skipped: " + ", ".join(skipped))
    if out.stopped:
        notes.append(f"stopped early ({out.stopped}): the counts are lower bounds")
    parts = [head] + [f"[{n}]" for n in notes]
    if not out.total_lines:
        parts.append("No matches." + ("" if out.searched else " No text files were searched."))
    size = sum(map(len, parts))
    cut = False
    for f in sorted(out.files, key=lambda f: f.rel.split("/")):
        block = [f"\n{f.rel} ({f.count} matching line{'s' * (f.count != 1)})"]
        width = max(4, len(str(max(n for n, _m, _t in f.lines))))
        for n, is_match, text in f.lines:
            block.append("  --" if n == 0 else f"{n:>{width}}{':' if is_match else '-'} {text}")
        chunk = "\n".join(block)
        if size + len(chunk) > _MAX_OUTPUT_CHARS:
            cut = True
            parts.append(f"\n[output cut at {_MAX_OUTPUT_CHARS} characters; narrow the search]")
            break
        parts.append(chunk)
        size += len(chunk)
    return ToolResult.success(
        "\n".join(parts),
        truncated=cut or out.total_lines > out.shown or bool(out.stopped),
        metadata={"matches": out.total_lines, "files": out.total_files, "searched": out.searched},
    )


def _describe(args: Any) -> str:
    kind = "regex" if args.regex else "text"
    return f"search {args.path} for {kind} {args.pattern!r}"


@tool("fs", policy=path_check("list"), describe=_describe, session_key=path_session_key("search"))
async def search(
    ctx: ToolContext,
    pattern: Annotated[str, Field(min_length=1)],
    path: str = ".",
    regex: bool = False,
    case_sensitive: bool = False,
    include: list[str] | None = None,
    exclude: list[str] | None = None,
    context_lines: Annotated[int, Field(ge=0, le=10)] = 0,
    max_results: Annotated[int, Field(ge=1, le=500)] = 50,
) -> ToolResult | JSON:
    """Search the contents of files under a directory (like grep -rn), grouped by file.

    Matching lines are shown as "  12: text", context lines as "  11- text". Skips .git, binary files,
    files over the size limit (fs_max_size) and protected files; symlinks are not followed (a file one
    points to inside the tree is found where it really is). Says how many matching lines and files there
    are in total, and when the output was cut.

    Args:
        pattern: Text to find; a Python regular expression when regex is true.
        path: Directory (or single file) to search, relative to the working directory.
        regex: Treat pattern as a regular expression (Python re syntax) instead of literal text.
        case_sensitive: Match letter case exactly.
        include: Only search files matching one of these globs, e.g. ["*.py", "src/*"] (a glob without
            "/" matches the file name, with "/" the path relative to the searched directory).
        exclude: Skip files and directories matching one of these globs, e.g. ["tests", "*.min.js"].
        context_lines: Lines of context to show before and after each match.
        max_results: Most matching lines to show (all are counted).
    """
    policy = path_policy_of(ctx)
    verdict = policy.check(path, "list", str(ctx.cwd))
    if verdict.decision == "deny":
        return ToolResult.denied(denial_message(path, verdict), metadata={"rule": verdict.rule})
    try:
        matcher = Matcher(pattern, regex, case_sensitive)
    except re.error as exc:
        return ToolResult.error(
            f"Invalid regular expression {pattern!r}: {exc}. Fix it, or use regex=false to search for the text."
        )
    root = policy.resolve(path, str(ctx.cwd))
    stop = threading.Event()
    job = _Search(
        matcher,
        PolicyGate(policy),
        max_size=ctx.settings.fs_max_size,
        include=list(include or []),
        exclude=list(exclude or []),
        context=context_lines,
        max_results=max_results,
        stop=stop,
    )
    try:
        out = await asyncio.to_thread(job.run, root)
    except FileNotFoundError:
        return ToolResult.error(f"'{path}' not found. List the directory first (list_dir).")
    except OSError as exc:
        return ToolResult.error(f"Cannot search '{path}': {exc.strerror or exc}.")
    finally:
        stop.set()  # a cancelled call stops the worker thread at the next file
    return _render(pattern, path, out, max_results)


TOOLS: list[Tool] = [search]
