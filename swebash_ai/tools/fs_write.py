"""Filesystem tools that change files: ``write_file`` and ``edit_file``.

Both always need approval (their policy is ``ask`` inside the workspace, the path policy's ``deny`` for
protected paths and ``.git/``), and both show the user a unified diff of exactly what will change. Writes are
atomic: a temporary file in the same directory, ``fsync``, then ``os.replace`` keeping the file's mode;
``mode="create"`` links the file into place so it never replaces one that appeared after approval.
"""

from __future__ import annotations

import asyncio
import dataclasses
import difflib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from swebash_ai.safety.paths import PathRefused, open_for_read
from swebash_ai.safety.secrets import KEY_MARKER, MARKER_PREFIX
from swebash_ai.storage.sizes import human_size
from swebash_ai.tools.atomic import write_atomically
from swebash_ai.tools.editor_files import EditorFiles, editor_bytes, editor_files
from swebash_ai.tools.fs import (
    _MAX_DIFF_LINES,
    _guard,
    _kind,
    _looks_binary,
    _no_session_key,
    _numbered,
    _split_lines,
    _stat_problem,
    _write_policy,
)
from swebash_ai.tools.registry import JSON, Tool, ToolContext, ToolResult, tool


@dataclass(frozen=True)
class _Change:
    """A planned write: where, the old bytes (``None``: a new file) and the new bytes."""

    resolved: Path
    old: bytes | None
    new: bytes
    replaced: int = 0
    old_note: str = ""


def _read_existing(path: str, resolved: Path, limit: int) -> bytes | ToolResult:
    try:
        data, truncated = open_for_read(resolved, limit)
    except PathRefused as exc:
        return ToolResult.error(f"Refusing to change '{path}': {exc}.")
    except OSError as exc:
        return ToolResult.error(f"Cannot read '{path}': {exc.strerror or exc}.")
    if truncated:
        return ToolResult.error(f"'{path}' is larger than the {limit}-byte limit (fs_max_size).")
    return data


_PLACEHOLDERS = (MARKER_PREFIX.encode(), KEY_MARKER.encode())


def _writes_a_mask(old: bytes | None, new: bytes) -> ToolResult | None:
    """The model only saw masked secrets: writing a mask back would destroy the value it stands for."""
    for marker in _PLACEHOLDERS:
        if new.count(marker) > (old or b"").count(marker):
            return ToolResult.error(
                f"The new text holds {marker.decode()!r}..., a placeholder for a secret that was masked in what "
                "you read; writing it would replace the real value. Leave those lines out of the change (edit "
                "the lines around them with edit_file), or ask the user to change them."
            )
    return None


def _plan_write(ctx: ToolContext, path: str, content: str, mode: str,
                current: bytes | None = None) -> _Change | ToolResult:
    """The change a write makes; ``current``: the editor's text of the file, in place of the disk's."""
    resolved = _guard(ctx, path, "write")
    if isinstance(resolved, ToolResult):
        return resolved
    limit = ctx.settings.fs_max_size
    new = content.encode("utf-8", "surrogateescape")
    try:
        st: os.stat_result | None = os.stat(resolved)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        return ToolResult.error(f"Cannot write '{path}': {exc.strerror}.")
    if st is not None and not stat.S_ISREG(st.st_mode):
        return ToolResult.error(f"'{path}' is a {_kind(st.st_mode)}; only regular files can be written.")
    if st is not None and mode == "create":
        return ToolResult.error(
            f"'{path}' already exists and mode='create' never overwrites. Use edit_file, or "
            "mode='overwrite' if replacing the whole file is intended."
        )
    old: bytes | None = None
    note = ""
    if st is not None and mode == "append":
        got = current if current is not None else _read_existing(path, resolved, limit)
        if isinstance(got, ToolResult):
            return got
        old, new = got, got + new
    elif st is not None:
        if st.st_size > limit:
            old, note = b"", f"(the current file, {human_size(st.st_size)}, is too large to show)"
        else:
            got = current if current is not None else _read_existing(path, resolved, limit)
            if isinstance(got, ToolResult):
                return got
            old = got
            if _looks_binary(got):
                old, note = b"", f"(the current file is binary, {human_size(len(got))}; it will be replaced)"
    if len(new) > limit:
        return ToolResult.error(
            f"The result would be {len(new)} bytes, over the {limit}-byte limit (fs_max_size). Write a smaller file."
        )
    return _writes_a_mask(old, new) or _Change(resolved, old, new, old_note=note)


def _keepends(data: bytes) -> list[str]:
    """Lines with their ``\\n`` (only ``\\n`` ends a line, as in ``read_file``)."""
    lines = [line + "\n" for line in data.decode("utf-8", "replace").split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def _diff_lines(path: str, change: _Change) -> list[str]:
    old, new = _keepends(change.old or b""), _keepends(change.new)
    src = "/dev/null" if change.old is None else f"a/{path}"
    out: list[str] = []
    for line in difflib.unified_diff(old, new, src, f"b/{path}"):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return out


def _counts(diff: list[str]) -> tuple[int, int]:
    body = diff[2:]  # after the ---/+++ header, a line's first character says what it is
    return sum(1 for d in body if d[:1] == "+"), sum(1 for d in body if d[:1] == "-")


def _render_preview(path: str, action: str, plan: _Change | ToolResult) -> str:
    if isinstance(plan, ToolResult):
        return f"This call will fail: {plan.text}"
    diff = _diff_lines(path, plan)
    added, removed = _counts(diff)
    if plan.old is None:  # "overwrite"/"append" of a file that does not exist yet creates it: say so
        head = f"create {path}: +{added} -{removed} lines, {len(plan.new)} bytes (new file)"
    else:
        head = f"{action} {path}: +{added} -{removed} lines, {len(plan.new)} bytes"
    parts = [head] + ([plan.old_note] if plan.old_note else [])
    if not diff:
        parts.append("(no change: the content is identical)")
    shown = "".join(diff[:_MAX_DIFF_LINES])
    if len(diff) > _MAX_DIFF_LINES:
        shown += f"[... {len(diff) - _MAX_DIFF_LINES} more diff lines not shown]\n"
    return "\n".join(parts) + "\n" + shown


def _checkpoint(ctx: ToolContext, change: _Change) -> None:
    """Let the session's checkpoint store (``ctx.services["checkpoints"]``) save the file's state first."""
    store = ctx.services.get("checkpoints")
    if store is not None:
        store.record(change.resolved, change.new)


def _commit(path: str, change: _Change, create_dirs: bool, verb: str, ctx: ToolContext | None = None) -> ToolResult:
    try:
        if ctx is not None:
            _checkpoint(ctx, change)
        write_atomically(change.resolved, change.new, create_dirs=create_dirs, exclusive=verb == "Created")
    except FileExistsError:
        return ToolResult.error(f"'{path}' was created by something else meanwhile; nothing was written.")
    except OSError as exc:
        return ToolResult.error(f"Could not write '{path}': {exc.strerror or exc}.")
    return _written(path, change, verb)


def _written(path: str, change: _Change, verb: str, where: str = "") -> ToolResult:
    added, removed = _counts(_diff_lines(path, change))
    what = "new file, " if change.old is None else ""
    return ToolResult.success(
        f"{verb} '{path}' ({what}{len(change.new)} bytes written{where}; +{added} -{removed} lines).",
        metadata={"bytes": len(change.new), "added": added, "removed": removed, "path": str(change.resolved)},
    )


async def _editor_copy(ctx: ToolContext, path: str) -> tuple[EditorFiles | None, bytes | None]:
    """The editor that takes this write (``None``: the disk does) and its text of the file (``None``: the
    disk's is the one to change). Asked only about a path the guard allows."""
    editor = editor_files(ctx, "write")
    if editor is None:
        return None, None
    resolved = _guard(ctx, path, "write")
    if isinstance(resolved, ToolResult):
        return None, None  # the plan says why
    return editor, await editor_bytes(editor, resolved, ctx.settings.fs_max_size)


async def _commit_to(editor: EditorFiles | None, ctx: ToolContext, path: str, change: _Change, create_dirs: bool,
                     verb: str) -> ToolResult:
    """Write ``change``: into the editor's copy of an existing file (recorded for undo first, as on disk), else
    to the disk (a new file is created on disk, where ``mode="create"`` keeps its guarantee)."""
    if editor is None or change.old is None or not change.resolved.is_file():
        return await asyncio.to_thread(_commit, path, change, create_dirs, verb, ctx)
    try:
        await asyncio.to_thread(_checkpoint, ctx, change)
        await editor.write(change.resolved, change.new.decode("utf-8", "surrogateescape"))
    except OSError as exc:
        return ToolResult.error(f"Could not write '{path}' in the editor: {exc.strerror or exc}. Nothing was written.")
    return _written(path, change, verb, " in the editor")


def _describe_write(args: Any) -> str:
    size = len(args.content.encode("utf-8", "surrogateescape"))
    # The verb is the mode: "write ... (overwrite)" read as if an existing file were replaced, even for a
    # new one (the preview, which looks at the disk, says which).
    verb = {"overwrite": "write", "append": "append", "create": "create"}.get(args.mode, "write")
    return f"{verb} {size} bytes to {args.path}"


@tool(
    "fs",
    policy=_write_policy,
    describe=_describe_write,
    session_key=_no_session_key,
    preview=lambda ctx, a: _render_preview(a.path, a.mode, _plan_write(ctx, a.path, a.content, a.mode)),
)
async def write_file(
    ctx: ToolContext,
    path: str,
    content: str,
    mode: Literal["overwrite", "append", "create"] = "overwrite",
    create_dirs: bool = True,
) -> ToolResult | JSON:
    """Write a text file (UTF-8). Always needs the user's approval; they see the diff first.

    Prefer edit_file for changing part of an existing file. The result must stay under the size limit
    (fs_max_size, 1 MiB by default). The write is atomic and keeps the file's permissions. For code, the
    result lists the language server's errors and warnings of the new text (or says why it could not).

    Args:
        path: File to write, relative to the working directory.
        content: The full text to write (or to add, with mode="append").
        mode: "overwrite" replaces the file, "append" adds to its end, "create" fails if it exists.
        create_dirs: Create missing parent directories.
    """
    editor, current = await _editor_copy(ctx, path)
    plan = await asyncio.to_thread(_plan_write, ctx, path, content, mode, current)
    if isinstance(plan, ToolResult):
        return plan
    verb = {"overwrite": "Wrote", "append": "Appended to", "create": "Created"}[mode]
    result = await _commit_to(editor, ctx, path, plan, create_dirs, verb)
    return await _with_diagnostics(ctx, plan, result)


async def _with_diagnostics(ctx: ToolContext, change: _Change, result: ToolResult) -> ToolResult:
    """``result`` with the language server's diagnostics of the new text (``tools/diagnostics.py``)."""
    if not result.ok:
        return result
    from swebash_ai.tools.diagnostics import after_edit

    shown, data = await after_edit(ctx, change.resolved, change.new.decode("utf-8", "replace"))
    if data is None:
        return result
    return dataclasses.replace(result, content=result.text + shown, metadata={**result.metadata, "diagnostics": data})


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _near_match(text: str, old: str) -> str:
    """A hint showing where ``old`` almost matches (cheap: exact stripped line, else a fuzzy line match)."""
    first = next((line.strip() for line in old.split("\n") if line.strip()), "")
    if not first:
        return ""
    lines = _split_lines(text)
    idx = next((i for i, line in enumerate(lines) if line.strip() == first), None)
    why = "the same text with different whitespace or indentation"
    if idx is None and len(lines) <= 5000:
        close = difflib.get_close_matches(first, [line.strip() for line in lines], n=1, cutoff=0.75)
        if close:
            idx = next(i for i, line in enumerate(lines) if line.strip() == close[0])
            why = "similar text"
    if idx is None:
        return " Read the file again and copy the text exactly."
    lo, hi = max(0, idx - 2), min(len(lines), idx + old.count("\n") + 3)
    return (
        f" Closest match ({why}) near line {idx + 1}:\n{_numbered(lines[lo:hi], lo + 1)}\n"
        "Copy the text exactly (without the line-number prefix), including whitespace."
    )


def _plan_edit(ctx: ToolContext, path: str, old: str, new: str, count: int,
               current: bytes | None = None) -> _Change | ToolResult:
    """The change an edit makes; ``current``: the editor's text of the file, in place of the disk's."""
    resolved = _guard(ctx, path, "write")
    if isinstance(resolved, ToolResult):
        return resolved
    st = _stat_problem(path, resolved, want="file")
    if isinstance(st, ToolResult):
        if "not found" in st.text:
            return ToolResult.error(f"'{path}' does not exist. Create it with write_file(mode='create').")
        return st
    data = current if current is not None else _read_existing(path, resolved, ctx.settings.fs_max_size)
    if isinstance(data, ToolResult):
        return data
    if _looks_binary(data):
        return ToolResult.error(f"'{path}' is a binary file; edit_file only changes text files.")
    if old == new:
        return ToolResult.error("old and new are identical: there is nothing to change.")
    text = data.decode("utf-8", "surrogateescape")
    found = text.count(old)
    if found == 0 and "\r\n" in text and "\n" in old and "\r\n" not in old:
        crlf_old = old.replace("\n", "\r\n")
        if text.count(crlf_old):  # the file uses CRLF line ends; the model wrote LF
            old, new = crlf_old, new.replace("\r\n", "\n").replace("\n", "\r\n")
            found = text.count(old)
    if found == 0:
        hint = _near_match(text, old)
        return ToolResult.error(f"The text to replace (old) was not found in '{path}'.{hint}")
    if count and found != count:
        where: list[str] = []
        pos = text.find(old)
        while pos != -1 and len(where) < 10:
            where.append(str(_line_of(text, pos)))
            pos = text.find(old, pos + len(old))
        return ToolResult.error(
            f"old matches {found} times in '{path}' (at lines {', '.join(where)}), but count={count}. "
            "Add surrounding lines to old so it matches exactly the place you mean, or set count to "
            f"{found} (or 0) to replace every occurrence."
        )
    new_bytes = text.replace(old, new).encode("utf-8", "surrogateescape")
    if len(new_bytes) > ctx.settings.fs_max_size:
        return ToolResult.error(f"The edited file would be over the {ctx.settings.fs_max_size}-byte limit.")
    return _writes_a_mask(data, new_bytes) or _Change(resolved, data, new_bytes, replaced=found)


def _describe_edit(args: Any) -> str:
    how = "every occurrence" if args.count == 0 else f"{args.count} occurrence{'s' * (args.count > 1)}"
    return f"edit {args.path} (replace {how})"


@tool(
    "fs",
    policy=_write_policy,
    describe=_describe_edit,
    session_key=_no_session_key,
    preview=lambda ctx, a: _render_preview(a.path, "edit", _plan_edit(ctx, a.path, a.old, a.new, a.count)),
)
async def edit_file(
    ctx: ToolContext,
    path: str,
    old: Annotated[str, Field(min_length=1)],
    new: str,
    count: Annotated[int, Field(ge=0, le=10_000)] = 1,
) -> ToolResult | JSON:
    """Replace exact text in a file. Always needs the user's approval; they see the diff first.

    old must match the file exactly (whitespace and indentation included, no line-number prefixes)
    and exactly count times; otherwise nothing changes and the error says how many times it matched
    and where. Include a few surrounding lines in old to make it unique. For code, the result lists the
    language server's errors and warnings of the edited file (or says why it could not).

    Args:
        path: File to edit, relative to the working directory.
        old: The exact text to find.
        new: The text to put in its place.
        count: How many occurrences must match (all are replaced); 0 replaces all, however many.
    """
    editor, current = await _editor_copy(ctx, path)
    plan = await asyncio.to_thread(_plan_edit, ctx, path, old, new, count, current)
    if isinstance(plan, ToolResult):
        return plan
    result = await _commit_to(editor, ctx, path, plan, False, "Edited")
    if result.ok:
        n = plan.replaced
        result = ToolResult.success(
            f"{result.text[:-1]}; replaced {n} occurrence{'s' * (n > 1)}.", metadata=result.metadata
        )
    return await _with_diagnostics(ctx, plan, result)


async def planned_change(ctx: ToolContext, tool: str, arguments: dict[str, Any],
                         current: bytes | None) -> tuple[bytes | None, bytes] | None:
    """(old, new) bytes of a ``write_file``/``edit_file`` call, planned from ``current`` (an editor's text of the
    file; ``None``: the disk's), or ``None`` when it would fail: what an editor's diff shows."""
    if tool == "write_file" and isinstance(arguments.get("content"), str):
        plan = await asyncio.to_thread(_plan_write, ctx, str(arguments.get("path", "")), arguments["content"],
                                       str(arguments.get("mode", "overwrite")), current)
    elif tool == "edit_file" and isinstance(arguments.get("old"), str) and isinstance(arguments.get("new"), str):
        plan = await asyncio.to_thread(_plan_edit, ctx, str(arguments.get("path", "")), arguments["old"],
                                       arguments["new"], int(arguments.get("count", 1)), current)
    else:
        return None
    return None if isinstance(plan, ToolResult) else (plan.old, plan.new)


TOOLS: list[Tool] = [write_file, edit_file]
