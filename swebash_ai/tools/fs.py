"""Filesystem tools: ``read_file``, ``list_dir``, ``exists``, ``metadata``, ``write_file``, ``edit_file``.

Contract:
    Every tool's ``policy`` is the path policy's verdict for the right operation (``read``, ``list``,
    ``exists``, ``metadata``, ``write``): allow inside the workspace, ask outside it, deny for protected
    paths.  Writes and edits *always* ask (the policy's ``allow`` is turned into ``ask``) and their
    ``preview`` is the unified diff of exactly what will change.  Tools re-check the policy when they
    run (a denied path is never touched, even if a caller skipped ``check``), never raise, and answer
    problems with messages the model can act on.

Why:
    * Reads go through :func:`swebash_ai.safety.paths.open_for_read` (``O_NOFOLLOW|O_NONBLOCK``, regular
      files only, the descriptor re-checked), so a FIFO cannot hang a turn and a swapped symlink cannot
      redirect a read.  A file over ``fs_max_size`` is only read by line range, streamed line by line
      with the same safe open, so a huge log never sits in memory.
    * ``exists`` and ``metadata`` on a protected path answer with the same denial whether or not it
      exists, and ``list_dir`` hides protected names: none of them is an existence oracle for secrets.
    * Writes are atomic (temporary file in the same directory, ``fsync``, ``os.replace``) and keep the
      file's permission bits, so an interrupted write never leaves half a file.  Edits decode with
      ``surrogateescape`` so bytes that are not UTF-8 survive an edit unchanged.
"""

from __future__ import annotations

import asyncio
import fnmatch
import os
import pwd
import stat
from collections import deque
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from swebash_ai.safety.paths import SECRET_REASON, PathRefused, is_binary, open_for_read
from swebash_ai.safety.secrets import is_key_file
from swebash_ai.safety.verdict import Verdict
from swebash_ai.storage.sizes import human_size
from swebash_ai.tools.editor_files import editor_bytes, editor_files
from swebash_ai.tools.guard import PolicyGate, denial_message, path_check, path_policy_of, path_session_key
from swebash_ai.tools.key_ranges import (
    RangeNotJudged,
    open_key_head,
    shown_without_keys,
    skip_lines,
    streamed_without_keys,
)
from swebash_ai.tools.registry import JSON, Tool, ToolContext, ToolResult, tool
from swebash_ai.words import count

__all__ = ["TOOLS", "directory_listing"]

#: Directories ``list_dir`` shows but does not descend into when recursive (unless listed directly).
SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__"})
_MAX_DIFF_LINES = 4000


# --- shared plumbing -----------------------------------------------------------------------------------
def _verdict(ctx: ToolContext, path: str, op: str) -> Verdict:
    return path_policy_of(ctx).check(path, op, str(ctx.cwd))


def _guard(ctx: ToolContext, path: str, op: str) -> Path | ToolResult:
    """Re-check the policy at run time and resolve the path; a denial result when it is denied."""
    verdict = _verdict(ctx, path, op)
    if verdict.decision == "deny":
        return ToolResult.denied(denial_message(path, verdict), metadata={"rule": verdict.rule})
    try:
        return path_policy_of(ctx).resolve(path, str(ctx.cwd))
    except PathRefused as exc:
        return ToolResult.denied(f"Path '{path}' refused: {exc}.")


def _write_policy(ctx: ToolContext, args: Any) -> Verdict:
    verdict = _verdict(ctx, args.path, "write")
    if verdict.decision == "allow":  # writes always need a person's yes, whatever the path policy says
        return Verdict.ask(f"writes {args.path}", rule="fs.write")
    return verdict


def _no_session_key(_ctx: ToolContext, _args: Any) -> str | None:
    return None  # every write is approved on its own diff


_KINDS = {
    stat.S_IFREG: "file",
    stat.S_IFDIR: "directory",
    stat.S_IFLNK: "symlink",
    stat.S_IFIFO: "fifo",
    stat.S_IFSOCK: "socket",
    stat.S_IFCHR: "device",
    stat.S_IFBLK: "device",
}


def _kind(mode: int) -> str:
    return _KINDS.get(stat.S_IFMT(mode), "other")


def _looks_binary(data: bytes) -> bool:
    """NUL in the first 8 KiB, or mostly not UTF-8 (a Latin-1 text file still reads, with a note)."""
    sample = data[:8192]
    if not is_binary(sample):
        return False
    if b"\x00" in sample:
        return True
    bad = sample.decode("utf-8", "replace").count("\ufffd") - sample.count(b"\xef\xbf\xbd")
    return bad > len(sample) * 0.3


def _decode(data: bytes) -> tuple[str, int]:
    """UTF-8 text and how many bytes could not be decoded (shown as U+FFFD)."""
    try:
        return data.decode("utf-8"), 0
    except UnicodeDecodeError:
        text = data.decode("utf-8", "replace")
        return text, max(1, text.count("\ufffd") - data.count(b"\xef\xbf\xbd"))


def _split_lines(text: str) -> list[str]:
    """Lines the way editors and grep count them (only ``\\n`` ends a line; ``\\r`` is dropped)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _numbered(lines: list[str], first: int) -> str:
    width = max(4, len(str(first + len(lines) - 1)))
    return "\n".join(f"{n:>{width}}| {line}" for n, line in enumerate(lines, first))


def _open_regular(path: Path) -> int:
    """Open like ``open_for_read`` (no symlink, no blocking, regular file, fd re-checked); return the fd.

    ``paths.open_for_read`` returns at most ``max_size`` bytes; streaming a line range out of a larger
    file needs the descriptor itself, which ``paths`` does not offer.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise PathRefused(f"it is a {_kind(st.st_mode)}, only regular files can be read")
        link = f"/proc/self/fd/{fd}"
        if os.path.exists(link) and os.readlink(link) != str(path):
            raise PathRefused("the path changed between the check and the open")
    except BaseException:
        os.close(fd)
        raise
    return fd


def _key_refusal(path: str) -> ToolResult:
    """A file whose text is a private key is refused like a protected file, whatever its name."""
    verdict = Verdict.deny(SECRET_REASON + ": it holds a private key", rule="content.private_key")
    return ToolResult.denied(denial_message(path, verdict), metadata={"rule": verdict.rule})


def _range_refusal(path: str, start: int, end: int | None, reason: str) -> ToolResult:
    """A range of a file over fs_max_size that may hold a private key the window around it cannot judge."""
    lines = f"lines {start}-{end}" if end is not None else f"lines {start} to the end"
    return ToolResult.denied(
        f"Not shown: {lines} of '{path}', because {reason}. Ranges after the key's END line are read as usual, "
        "with any key lines shown as [private key removed]. Do not try to read the key another way; ask the user "
        "if you need these lines.",
        metadata={"rule": "content.private_key"},
    )


def _stat_problem(path: str, resolved: Path, *, want: Literal["file", "dir"]) -> ToolResult | os.stat_result:
    try:
        st = os.stat(resolved)
    except (FileNotFoundError, NotADirectoryError):
        hint = "List the directory first" if want == "file" else "List its parent directory first"
        return ToolResult.error(f"'{path}' not found. {hint} (list_dir) or search for it.")
    except OSError as exc:
        return ToolResult.error(f"Cannot access '{path}': {exc.strerror}.")
    if want == "file" and stat.S_ISDIR(st.st_mode):
        return ToolResult.error(f"'{path}' is a directory. Use list_dir to see what it holds.")
    if want == "dir" and not stat.S_ISDIR(st.st_mode):
        return ToolResult.error(f"'{path}' is not a directory. Use read_file or metadata on it.")
    if want == "file" and not stat.S_ISREG(st.st_mode):
        return ToolResult.error(
            f"'{path}' is a {_kind(st.st_mode)}, not a regular file; only regular files can be read."
        )
    return st


# --- read_file -----------------------------------------------------------------------------------------
def _describe_read(args: Any) -> str:
    if args.start_line == 1 and args.end_line is None:
        return f"read {args.path}"
    return f"read {args.path} lines {args.start_line}-{args.end_line if args.end_line else 'end'}"


@tool("fs", policy=path_check("read"), describe=_describe_read, session_key=path_session_key("read"))
async def read_file(
    ctx: ToolContext,
    path: str,
    start_line: Annotated[int, Field(ge=1)] = 1,
    end_line: Annotated[int | None, Field(ge=1)] = None,
) -> ToolResult | JSON:
    """Read a text file, with line numbers ("  12| text"), whole or a range of lines.

    Files larger than the size limit (fs_max_size, 1 MiB by default) are only read by line range: ask
    for start_line/end_line. Binary files, directories, FIFOs and devices are refused. Text that is not
    valid UTF-8 is shown with U+FFFD in place of the bad bytes (noted in the answer). Credential files and
    private keys are refused; tokens and passwords in other files are shown as [masked:KIND].

    Args:
        path: File path, relative to the working directory (or absolute, or starting with ~/).
        start_line: First line to show, counting from 1.
        end_line: Last line to show (inclusive); omit to read to the end.
    """
    editor = editor_files(ctx, "read")
    if editor is not None:  # the editor's buffer, once the guard allowed the path (tools/editor_files.py)
        resolved = _guard(ctx, path, "read")
        if isinstance(resolved, ToolResult):
            return resolved
        data = await editor_bytes(editor, resolved, ctx.settings.fs_max_size)
        if data is not None and (end_line is None or end_line >= start_line):
            return _shown_read(path, data, start_line, end_line)
    return await asyncio.to_thread(_read_file, ctx, path, start_line, end_line)


def _read_file(ctx: ToolContext, path: str, start: int, end: int | None) -> ToolResult:
    resolved = _guard(ctx, path, "read")
    if isinstance(resolved, ToolResult):
        return resolved
    if end is not None and end < start:
        return ToolResult.error(f"end_line ({end}) is before start_line ({start}).")
    st = _stat_problem(path, resolved, want="file")
    if isinstance(st, ToolResult):
        return st
    limit = ctx.settings.fs_max_size
    ranged = start > 1 or end is not None
    too_big = (
        f"'{path}' is {human_size(st.st_size)} ({st.st_size} bytes), over the {limit}-byte limit "
        "(fs_max_size). Read it in parts with start_line and end_line (e.g. 1-200), or search it."
    )
    if st.st_size > limit:
        if not ranged:
            return ToolResult.error(too_big)
        return _read_range_streaming(path, resolved, start, end, limit, st.st_size)
    try:
        data, truncated = open_for_read(resolved, limit)
    except PathRefused as exc:
        return ToolResult.error(f"Refusing to read '{path}': {exc}")
    except OSError as exc:
        return ToolResult.error(f"Cannot read '{path}': {exc.strerror or exc}.")
    if truncated:  # it grew since the stat
        if not ranged:
            return ToolResult.error(too_big)
        return _read_range_streaming(path, resolved, start, end, limit, st.st_size)
    return _shown_read(path, data, start, end)


def _shown_read(path: str, data: bytes, start: int, end: int | None) -> ToolResult:
    """A whole file's bytes (``data``, within the size limit) as ``read_file`` shows them."""
    ranged = start > 1 or end is not None
    if _looks_binary(data):
        return ToolResult.error(
            f"'{path}' is a binary file ({human_size(len(data))}); read_file only shows text. "
            "Use metadata for its size and type."
        )
    text, bad = _decode(data)
    if is_key_file(text):
        return _key_refusal(path)
    lines = _split_lines(text)
    total = len(lines)
    if total == 0:
        return ToolResult.success(f"'{path}' is empty (0 lines).", metadata={"lines": 0})
    if start > total:
        return ToolResult.error(f"start_line {start} is past the end: '{path}' has {total} lines.")
    last = min(end or total, total)
    shown = f"lines {start}-{last} of {total}" if (start, last) != (1, total) else f"{total} lines"
    parts = [f"{path} ({shown})"]
    if bad:
        parts.append(_bad_bytes_note(bad))
    # A range is shown as the whole file would be once its keys are removed: a scan of the range alone misses
    # the middle of a key (tools/key_ranges.py). A whole read is left to the loop's scan.
    shown_lines, keys = shown_without_keys(text, lines, start - 1, last - 1) if ranged else (lines, 0)
    parts.append(_numbered(shown_lines, start))
    if end is not None and end > total:
        parts.append(f"[the file ends at line {total}]")
    return ToolResult.success("\n".join(parts), metadata={"lines": total, "bytes": len(data)}, keys_removed=keys)


def _read_range_streaming(path: str, resolved: Path, start: int, end: int | None, limit: int, size: int) -> ToolResult:
    """Lines ``start..end`` of a file over the limit, reading line by line and at most ``limit`` bytes."""
    try:
        fd = _open_regular(resolved)
    except PathRefused as exc:
        return ToolResult.error(f"Refusing to read '{path}': {exc}.")
    except OSError as exc:
        return ToolResult.error(f"Cannot read '{path}': {exc.strerror or exc}.")
    kept: list[bytes] = []
    budget = limit
    cut_at: int | None = None
    with os.fdopen(fd, "rb") as f:
        if _looks_binary(f.read(8192)):
            return ToolResult.error(f"'{path}' is a binary file ({human_size(size)}); read_file only shows text.")
        f.seek(0)
        skipped = skip_lines(f, start - 1)  # without holding them, however long they are
        lineno = skipped.lines
        offset = f.tell()  # where the range begins
        try:  # the key block the range may begin in (its lines carry no header of their own)
            key_head = open_key_head(f, skipped)
        except RangeNotJudged as exc:
            return _range_refusal(path, start, end, str(exc))
        while lineno + 1 >= start and (end is None or lineno < end):
            line = f.readline(budget + 1)
            if not line:
                break
            lineno += 1
            if len(line) > budget:
                cut_at = lineno
                break
            budget -= len(line)
            kept.append(line)
        if kept:  # keys in and around the range (a block, a headerless body): judged on the bytes around it
            text, bad = _decode(b"".join(kept))
            ahead = cut_at is None and end is not None and lineno >= end
            try:
                lines, keys = streamed_without_keys(f, offset, _split_lines(text), b"".join(kept), ahead=ahead,
                                                    armor=skipped.armor, key_head=key_head)
            except RangeNotJudged as exc:
                return _range_refusal(path, start, end, str(exc))
    if not kept:
        if cut_at is not None:
            return ToolResult.error(f"Line {cut_at} of '{path}' alone is longer than the {limit}-byte limit.")
        return ToolResult.error(f"start_line {start} is past the end: '{path}' has {lineno} lines.")
    last = start + len(lines) - 1
    parts = [
        f"{path} (lines {start}-{last}; the file is {human_size(size)}, over fs_max_size, so only this range was read)"
    ]
    if bad:
        parts.append(_bad_bytes_note(bad))
    parts.append(_numbered(lines, start))
    if cut_at is not None:
        parts.append(f"[cut at the {limit}-byte limit; continue with start_line={cut_at}]")
    elif end is not None and last < end:
        parts.append(f"[the file ends at line {last}]")
    return ToolResult.success("\n".join(parts), truncated=cut_at is not None, metadata={"streamed": True},
                              keys_removed=keys)


# --- list_dir ------------------------------------------------------------------------------------------
def _describe_list(args: Any) -> str:
    extra = f" (recursive, depth {args.max_depth})" if args.recursive else ""
    return f"list {args.path}{extra}" + (f" matching {args.pattern}" if args.pattern else "")


@tool("fs", policy=path_check("list"), describe=_describe_list, session_key=path_session_key("list"))
async def list_dir(
    ctx: ToolContext,
    path: str = ".",
    recursive: bool = False,
    max_depth: Annotated[int, Field(ge=1, le=10)] = 2,
    show_hidden: bool = False,
    pattern: str | None = None,
    max_entries: Annotated[int, Field(ge=1, le=2000)] = 200,
) -> ToolResult | JSON:
    """List a directory: "name/" for directories, "name  (size)" for files, "name -> target" for links.

    Recursive listings stop at max_depth and show .git, node_modules and __pycache__ without going
    into them (list them directly to see inside). At most max_entries entries are shown, shallow ones
    first, and the answer says how many were left out.

    Args:
        path: Directory to list, relative to the working directory.
        recursive: Also list subdirectories, down to max_depth levels.
        max_depth: Levels to go down when recursive (1 = only this directory).
        show_hidden: Include names starting with a dot.
        pattern: Glob on entry names, e.g. "*.py"; directories are still walked when recursive.
        max_entries: Most entries to show.
    """
    return await asyncio.to_thread(_list_dir, ctx, path, recursive, max_depth, show_hidden, pattern, max_entries)


def _entry_line(entry: os.DirEntry[str], rel: str, pruned: bool) -> str:
    try:
        if entry.is_symlink():
            return f"{rel} -> {os.readlink(entry.path)}"
        if entry.is_dir(follow_symlinks=False):
            return f"{rel}/" + ("  (not expanded)" if pruned else "")
        st = entry.stat(follow_symlinks=False)
    except OSError:
        return f"{rel}  [unreadable]"
    if stat.S_ISREG(st.st_mode):
        return f"{rel}  ({human_size(st.st_size)})"
    return f"{rel}  [{_kind(st.st_mode)}]"


def _list_dir(
    ctx: ToolContext,
    path: str,
    recursive: bool,
    max_depth: int,
    show_hidden: bool,
    pattern: str | None,
    max_entries: int,
) -> ToolResult:
    resolved = _guard(ctx, path, "list")
    if isinstance(resolved, ToolResult):
        return resolved
    st = _stat_problem(path, resolved, want="dir")
    if isinstance(st, ToolResult):
        return st
    gate = PolicyGate(path_policy_of(ctx))
    depth_limit = max_depth if recursive else 1
    shown: list[tuple[tuple[str, ...], str]] = []
    found = 0
    unreadable: list[str] = []
    overflow_cap = max_entries + 50_000  # stop counting what is cut somewhere
    queue: deque[tuple[str, str, int]] = deque([(str(resolved), "", 1)])
    while queue and found < overflow_cap:
        directory, rel, depth = queue.popleft()
        try:
            with os.scandir(directory) as it:
                items = sorted(it, key=lambda e: e.name)
        except OSError:
            unreadable.append(rel or ".")
            continue
        full = gate.full_check_below(directory)
        for entry in items:
            if not show_hidden and entry.name.startswith("."):
                continue
            if gate.denied(entry.path, entry.name, full):
                continue  # protected names are not shown at all (no existence oracle)
            erel = rel + entry.name
            is_dir = entry.is_dir(follow_symlinks=False)
            pruned = recursive and is_dir and entry.name in SKIP_DIRS
            if is_dir and recursive and depth < depth_limit and not pruned:
                queue.append((entry.path, erel + "/", depth + 1))
            if pattern and not fnmatch.fnmatch(entry.name, pattern):
                continue
            found += 1
            if len(shown) < max_entries:
                shown.append((tuple(erel.split("/")), _entry_line(entry, erel, pruned)))
    shown.sort(key=lambda item: item[0])
    what = f"{found} entr{'y' if found == 1 else 'ies'}" + (f" matching {pattern!r}" if pattern else "")
    how = f", recursive to depth {depth_limit}" if recursive else ""
    lines = [f"{path} ({what}{how})"] + [line for _key, line in shown]
    cut = found - len(shown)
    if cut:
        more = "at least " if queue else ""
        lines.append(
            f"[{more}{cut} more entries not shown (max_entries={max_entries}); narrow with a pattern, "
            "a subdirectory or a smaller max_depth]"
        )
    if unreadable:
        lines.append(f"[could not read: {', '.join(unreadable[:10])}]")
    if not found:
        lines.append("(empty)" if not pattern else "(nothing matches)")
    return ToolResult.success("\n".join(lines), truncated=bool(cut), metadata={"entries": found})


def directory_listing(ctx: ToolContext, path: str, max_entries: int = 200) -> ToolResult:
    """What ``list_dir`` answers for one directory (not recursive, no hidden names): the listing an
    ``@folder`` mention attaches, with the same guard and the same protected names left out."""
    return _list_dir(ctx, path, False, 1, False, None, max_entries)


# --- exists / metadata ---------------------------------------------------------------------------------
@tool(
    "fs",
    policy=path_check("exists"),
    describe=lambda a: f"check whether {a.path} exists",
    session_key=path_session_key("exists"),
)
async def exists(ctx: ToolContext, path: str) -> ToolResult | JSON:
    """Check whether a path exists, and what it is (file, directory, symlink, ...).

    Args:
        path: Path to check, relative to the working directory.
    """
    return await asyncio.to_thread(_exists, ctx, path)


def _exists(ctx: ToolContext, path: str) -> ToolResult | JSON:
    resolved = _guard(ctx, path, "exists")
    if isinstance(resolved, ToolResult):
        return resolved
    out: dict[str, Any] = {"path": path, "exists": False}
    lexical = path_policy_of(ctx).lexical(path, str(ctx.cwd))
    try:
        st = os.stat(resolved)
    except OSError:
        if os.path.islink(lexical):
            out["type"] = "symlink (broken: its target does not exist)"
        return out
    out["exists"] = True
    out["type"] = _kind(st.st_mode)
    if os.path.islink(lexical):
        out["symlink_to"] = str(resolved)
    return out


@tool(
    "fs",
    policy=path_check("metadata"),
    describe=lambda a: f"show metadata of {a.path}",
    session_key=path_session_key("metadata"),
)
async def metadata(ctx: ToolContext, path: str) -> ToolResult | JSON:
    """Size, type, modification time, permissions and owner of a path (does not read the content).

    Args:
        path: Path to inspect, relative to the working directory.
    """
    return await asyncio.to_thread(_metadata, ctx, path)


def _metadata(ctx: ToolContext, path: str) -> ToolResult | JSON:
    resolved = _guard(ctx, path, "metadata")
    if isinstance(resolved, ToolResult):
        return resolved
    lexical = path_policy_of(ctx).lexical(path, str(ctx.cwd))
    try:
        st = os.stat(resolved)
    except OSError as exc:
        if isinstance(exc, FileNotFoundError | NotADirectoryError):
            return ToolResult.error(f"'{path}' not found. List the directory first (list_dir).")
        return ToolResult.error(f"Cannot stat '{path}': {exc.strerror}.")
    out: dict[str, Any] = {
        "path": path,
        "resolved": str(resolved),
        "type": _kind(st.st_mode),
        "size": st.st_size,
        "size_human": human_size(st.st_size),
        "modified": datetime.fromtimestamp(st.st_mtime).astimezone().isoformat(timespec="seconds"),
        "permissions": stat.filemode(st.st_mode)[1:],
        "mode": f"{stat.S_IMODE(st.st_mode):04o}",
    }
    try:
        out["owner"] = pwd.getpwuid(st.st_uid).pw_name
    except KeyError:
        out["owner"] = st.st_uid
    if os.path.islink(lexical):
        out["symlink_target"] = os.readlink(lexical)
    return out


TOOLS: list[Tool] = [read_file, list_dir, exists, metadata]


def _bad_bytes_note(bad: int) -> str:
    verb = "is" if bad == 1 else "are"
    return f"[note: {count(bad, 'byte')} {verb} not valid UTF-8 and {verb} shown as \ufffd]"
