"""Filesystem tools: real files in a temp workspace, a private HOME, the real path policy."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from swebash_ai.config.settings import load_settings
from swebash_ai.safety.paths import PathPolicy
from swebash_ai.safety.verdict import Verdict
from swebash_ai.tools import fs, fs_write
from swebash_ai.tools.registry import Tool, ToolContext, ToolResult


@pytest.fixture
def ctx(workspace: Path, isolated_env: Path) -> ToolContext:
    return ToolContext(
        settings=load_settings().settings,
        cwd=workspace,
        path_policy=PathPolicy(roots=[workspace], home=isolated_env),
        command_policy=None,
    )


def limited(ctx: ToolContext, size: int) -> ToolContext:
    return dataclasses.replace(ctx, settings=ctx.settings.model_copy(update={"fs_max_size": size}))


def parse(t: Tool, kw: dict[str, Any]) -> Any:
    args = t.parse_arguments(kw)
    assert not isinstance(args, ToolResult), args.content
    return args


async def call(ctx: ToolContext, t: Tool, **kw: Any) -> ToolResult:
    return await asyncio.wait_for(t.invoke(ctx, parse(t, kw)), timeout=5)


def check(ctx: ToolContext, t: Tool, **kw: Any) -> Verdict:
    return t.check(ctx, parse(t, kw))


def preview(ctx: ToolContext, t: Tool, **kw: Any) -> str:
    text = t.preview(ctx, parse(t, kw))
    assert text is not None
    return text


def numbered_file(ws: Path, n: int = 15, name: str = "f.txt") -> Path:
    p = ws / name
    p.write_text("".join(f"line{i}\n" for i in range(1, n + 1)))
    return p


def test_module_exports_every_tool() -> None:
    names = [t.name for t in fs.TOOLS + fs_write.TOOLS]
    assert names == ["read_file", "list_dir", "exists", "metadata", "write_file", "edit_file"]
    assert all(t.category == "fs" and t.description for t in fs.TOOLS + fs_write.TOOLS)
    props = fs.read_file.parameters["properties"]
    assert "First line" in props["start_line"]["description"] and props["start_line"]["minimum"] == 1


# --- read_file ----------------------------------------------------------------------------------------
async def test_read_whole_file_numbers_lines(ctx: ToolContext, workspace: Path) -> None:
    numbered_file(workspace, 3)
    r = await call(ctx, fs.read_file, path="f.txt")
    assert r.ok
    assert r.text.splitlines() == ["f.txt (3 lines)", "   1| line1", "   2| line2", "   3| line3"]


async def test_read_line_range(ctx: ToolContext, workspace: Path) -> None:
    numbered_file(workspace, 15)
    r = await call(ctx, fs.read_file, path="f.txt", start_line=10, end_line=12)
    assert r.ok
    body = r.text.splitlines()
    assert body[0] == "f.txt (lines 10-12 of 15)"
    assert body[1:] == ["  10| line10", "  11| line11", "  12| line12"]
    assert fs.read_file.describe(parse(fs.read_file, {"path": "f.txt", "start_line": 10, "end_line": 12})) == (
        "read f.txt lines 10-12"
    )


@pytest.mark.parametrize(
    ("start", "end", "needle"),
    [
        (5, 2, "before start_line"),  # reversed range
        (40, None, "has 15 lines"),  # starts after the end
    ],
)
async def test_read_bad_ranges(ctx: ToolContext, workspace: Path, start: int, end: int | None, needle: str) -> None:
    numbered_file(workspace, 15)
    r = await call(ctx, fs.read_file, path="f.txt", start_line=start, end_line=end)
    assert not r.ok and needle in r.text


async def test_read_missing_file_and_directory(ctx: ToolContext, workspace: Path) -> None:
    r = await call(ctx, fs.read_file, path="nope.txt")
    assert not r.ok and "not found" in r.text and "List the directory" in r.text
    (workspace / "d").mkdir()
    r = await call(ctx, fs.read_file, path="d")
    assert not r.ok and "is a directory" in r.text


async def test_read_over_size_limit_needs_a_range_then_streams(ctx: ToolContext, workspace: Path) -> None:
    numbered_file(workspace, 100)  # 'lineN\n' ~ 7 bytes: about 690 bytes
    small = limited(ctx, 100)
    size = (workspace / "f.txt").stat().st_size
    r = await call(small, fs.read_file, path="f.txt")
    assert not r.ok and f"{size} bytes" in r.text and "start_line" in r.text
    r = await call(small, fs.read_file, path="f.txt", start_line=50, end_line=52)
    assert r.ok and r.metadata.get("streamed")
    assert r.text.splitlines()[1:] == ["  50| line50", "  51| line51", "  52| line52"]
    # an open range stops at the byte limit and says where to continue
    r = await call(small, fs.read_file, path="f.txt", start_line=20)
    assert r.ok and r.truncated and "continue with start_line=" in r.text
    assert "  20| line20" in r.text and "line99" not in r.text


async def test_read_refuses_binary(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "b.bin").write_bytes(b"\x7fELF\x00\x01\x02" * 100)
    r = await call(ctx, fs.read_file, path="b.bin")
    assert not r.ok and "binary" in r.text


async def test_read_invalid_utf8_is_replaced_and_noted(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "latin.txt").write_bytes(b"caf\xe9 au lait\nok\n")
    r = await call(ctx, fs.read_file, path="latin.txt")
    assert r.ok and "caf\ufffd au lait" in r.text and "not valid UTF-8" in r.text


async def test_read_fifo_is_refused_without_hanging(ctx: ToolContext, workspace: Path) -> None:
    os.mkfifo(workspace / "pipe")
    r = await call(ctx, fs.read_file, path="pipe")  # call() fails the test after 5 s
    assert not r.ok and "fifo" in r.text.lower()
    r = await call(ctx, fs.read_file, path="pipe", start_line=2)
    assert not r.ok


async def test_symlink_out_of_workspace_asks(ctx: ToolContext, workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("hello\n")
    (workspace / "out").symlink_to(outside)
    assert check(ctx, fs.read_file, path="out").decision == "ask"
    assert check(ctx, fs.read_file, path="f.txt").decision == "allow"


async def test_symlink_to_secret_is_denied(ctx: ToolContext, workspace: Path, isolated_env: Path) -> None:
    ssh = isolated_env / ".ssh"
    ssh.mkdir()
    (ssh / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nsecret\n")
    (workspace / "key").symlink_to(ssh / "id_rsa")
    assert check(ctx, fs.read_file, path="key").decision == "deny"
    r = await call(ctx, fs.read_file, path="key")  # the tool re-checks even when the caller did not
    assert r.status == "denied" and "secret" not in r.text.replace("secrets", "")


@pytest.mark.parametrize("tool_", [fs.exists, fs.metadata], ids=["exists", "metadata"])
@pytest.mark.parametrize("rel", [".env", "~/.ssh/id_rsa"])
async def test_denied_existing_and_missing_answer_identically(
    ctx: ToolContext, workspace: Path, isolated_env: Path, tool_: Tool, rel: str
) -> None:
    target = workspace / rel if not rel.startswith("~") else isolated_env / rel[2:]
    assert check(ctx, tool_, path=rel).decision == "deny"
    missing = await call(ctx, tool_, path=rel)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("TOKEN=abc\n")
    present = await call(ctx, tool_, path=rel)
    assert check(ctx, tool_, path=rel) == check(ctx, tool_, path=rel)
    assert (present.status, present.content) == (missing.status, missing.content)
    assert present.status == "denied"


async def test_exists_and_metadata(ctx: ToolContext, workspace: Path) -> None:
    p = numbered_file(workspace, 2)
    p.chmod(0o640)
    (workspace / "ln").symlink_to("f.txt")
    r = await call(ctx, fs.exists, path="f.txt")
    assert r.content == {"path": "f.txt", "exists": True, "type": "file"}
    r = await call(ctx, fs.exists, path="missing")
    assert r.content == {"path": "missing", "exists": False}
    r = await call(ctx, fs.metadata, path="ln")
    assert isinstance(r.content, dict)
    assert r.content["type"] == "file" and r.content["size"] == 12
    assert r.content["permissions"] == "rw-r-----" and r.content["mode"] == "0640"
    assert r.content["symlink_target"] == "f.txt" and "T" in r.content["modified"]
    r = await call(ctx, fs.metadata, path="missing")
    assert not r.ok and "not found" in r.text


# --- list_dir -----------------------------------------------------------------------------------------
@pytest.fixture
def tree(workspace: Path) -> Path:
    for rel in ("a/b/c/deep.txt", "a/one.py", "two.txt", ".hidden", ".env", "node_modules/pkg/x.js"):
        p = workspace / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x" * 10)
    (workspace / "link").symlink_to("two.txt")
    return workspace


async def test_list_flat(ctx: ToolContext, tree: Path) -> None:
    r = await call(ctx, fs.list_dir)
    lines = r.text.splitlines()
    assert lines == [". (4 entries)", "a/", "link -> two.txt", "node_modules/", "two.txt  (10 B)"]
    assert not any("one.py" in line or "hidden" in line for line in lines)


async def test_list_recursive_depth_and_skipped_dirs(ctx: ToolContext, tree: Path) -> None:
    r = await call(ctx, fs.list_dir, recursive=True, max_depth=2)
    lines = r.text.splitlines()
    assert "a/b/" in lines and "a/one.py  (10 B)" in lines
    assert not any(line.startswith("a/b/c") for line in lines)  # depth 3
    assert "node_modules/  (not expanded)" in lines and not any("pkg" in line for line in lines)
    r = await call(ctx, fs.list_dir, path="node_modules", recursive=True)  # asked for directly
    assert "pkg/x.js  (10 B)" in r.text.splitlines()


async def test_list_hidden_never_shows_secrets(ctx: ToolContext, tree: Path) -> None:
    r = await call(ctx, fs.list_dir, show_hidden=True)
    lines = r.text.splitlines()
    assert ".hidden  (10 B)" in lines
    assert not any(".env" in line for line in lines)


async def test_list_pattern_and_cut_note(ctx: ToolContext, tree: Path) -> None:
    r = await call(ctx, fs.list_dir, recursive=True, max_depth=5, pattern="*.txt")
    lines = r.text.splitlines()
    assert lines[1:] == ["a/b/c/deep.txt  (10 B)", "two.txt  (10 B)"]
    r = await call(ctx, fs.list_dir, recursive=True, max_depth=5, max_entries=2)
    assert r.truncated and "more entries not shown (max_entries=2)" in r.text.splitlines()[-1]
    assert len(r.text.splitlines()) == 4


async def test_list_errors(ctx: ToolContext, tree: Path) -> None:
    assert "not a directory" in (await call(ctx, fs.list_dir, path="two.txt")).text
    assert "not found" in (await call(ctx, fs.list_dir, path="zzz")).text


# --- write_file ---------------------------------------------------------------------------------------
async def test_write_new_file_preview_policy_and_content(ctx: ToolContext, workspace: Path) -> None:
    kw = {"path": "sub/new.txt", "content": "hello\nworld\n", "mode": "create"}
    assert check(ctx, fs_write.write_file, **kw).decision == "ask"
    text = preview(ctx, fs_write.write_file, **kw)
    assert "--- /dev/null" in text and "+++ b/sub/new.txt" in text and "+hello\n+world\n" in text
    assert text.startswith("create sub/new.txt: +2 -0 lines") and "(new file)" in text
    assert not (workspace / "sub").exists()  # a preview changes nothing
    # The default mode on a missing file creates it too: the preview must not say "overwrite".
    fresh = preview(ctx, fs_write.write_file, path="fresh.txt", content="x\n")
    assert fresh.startswith("create fresh.txt: +1 -0 lines") and "overwrite" not in fresh
    assert fs_write.write_file.describe(parse(fs_write.write_file, {"path": "f.txt", "content": "ab"})) == (
        "write 2 bytes to f.txt")
    assert fs_write.write_file.describe(
        parse(fs_write.write_file, {"path": "f.txt", "content": "ab", "mode": "append"})) == "append 2 bytes to f.txt"
    r = await call(ctx, fs_write.write_file, **kw)
    assert r.ok and "12 bytes" in r.text
    assert (workspace / "sub/new.txt").read_text() == "hello\nworld\n"
    assert fs_write.write_file.session_key(ctx, parse(fs_write.write_file, kw)) is None


async def test_overwrite_keeps_mode_and_shows_diff(ctx: ToolContext, workspace: Path) -> None:
    p = workspace / "run.sh"
    p.write_text("echo a\necho b\n")
    p.chmod(0o750)
    text = preview(ctx, fs_write.write_file, path="run.sh", content="echo a\necho c\n")
    assert "-echo b\n+echo c\n" in text and " echo a\n" in text
    r = await call(ctx, fs_write.write_file, path="run.sh", content="echo a\necho c\n")
    assert r.ok and "+1 -1" in r.text
    assert p.read_text() == "echo a\necho c\n" and stat.S_IMODE(p.stat().st_mode) == 0o750
    assert sorted(os.listdir(workspace)) == ["run.sh"]  # no temporary file left behind


async def test_append_and_create_on_existing(ctx: ToolContext, workspace: Path) -> None:
    p = numbered_file(workspace, 1)
    r = await call(ctx, fs_write.write_file, path="f.txt", content="more\n", mode="append")
    assert r.ok and p.read_text() == "line1\nmore\n"
    r = await call(ctx, fs_write.write_file, path="f.txt", content="x", mode="create")
    assert not r.ok and "already exists" in r.text and p.read_text() == "line1\nmore\n"


async def test_write_size_limit(ctx: ToolContext, workspace: Path) -> None:
    r = await call(limited(ctx, 10), fs_write.write_file, path="big.txt", content="x" * 11)
    assert not r.ok and "limit" in r.text and not (workspace / "big.txt").exists()


async def test_write_is_atomic_when_replace_fails(
    ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = numbered_file(workspace, 3)

    def boom(*_a: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fs.os, "replace", boom)
    r = await call(ctx, fs_write.write_file, path="f.txt", content="new")
    assert not r.ok and "No space left" in r.text
    assert p.read_text() == "line1\nline2\nline3\n" and sorted(os.listdir(workspace)) == ["f.txt"]


@pytest.mark.parametrize("target", [".git/config", ".git/hooks/pre-commit"])
async def test_writes_into_git_are_denied(ctx: ToolContext, workspace: Path, target: str) -> None:
    (workspace / ".git/hooks").mkdir(parents=True)
    (workspace / ".git/config").write_text("[core]\n")
    assert check(ctx, fs_write.write_file, path=target, content="x").decision == "deny"
    assert check(ctx, fs_write.edit_file, path=target, old="[core]", new="x").decision == "deny"
    r = await call(ctx, fs_write.write_file, path=target, content="#!/bin/sh\nrm -rf ~\n")
    assert r.status == "denied"
    assert (workspace / ".git/config").read_text() == "[core]\n"
    assert not (workspace / ".git/hooks/pre-commit").exists()


async def test_write_outside_workspace_asks(ctx: ToolContext, tmp_path: Path) -> None:
    v = check(ctx, fs_write.write_file, path=str(tmp_path / "elsewhere.txt"), content="x")
    assert v.decision == "ask" and "outside the workspace" in v.reasons[0]


# --- edit_file ----------------------------------------------------------------------------------------
async def test_edit_replaces_exactly_and_previews(ctx: ToolContext, workspace: Path) -> None:
    p = workspace / "app.py"
    p.write_text("def f():\n    return 1\n\nprint(f())\n")
    kw = {"path": "app.py", "old": "    return 1\n", "new": "    return 2\n"}
    assert check(ctx, fs_write.edit_file, **kw).decision == "ask"
    text = preview(ctx, fs_write.edit_file, **kw)
    assert "--- a/app.py" in text and "-    return 1\n+    return 2\n" in text
    r = await call(ctx, fs_write.edit_file, **kw)
    assert r.ok and "replaced 1 occurrence" in r.text and "+1 -1" in r.text
    assert p.read_text() == "def f():\n    return 2\n\nprint(f())\n"


async def test_edit_no_match_shows_near_match(ctx: ToolContext, workspace: Path) -> None:
    p = workspace / "app.py"
    original = "class A:\n    def run(self):\n        return 1\n"
    p.write_text(original)
    r = await call(ctx, fs_write.edit_file, path="app.py", old="def run(self):\n    return 1", new="x")
    assert not r.ok and "not found" in r.text
    assert "near line 2" in r.text and "   2|     def run(self):" in r.text
    assert "This call will fail" in preview(ctx, fs_write.edit_file, path="app.py", old="zzz", new="y")
    assert p.read_text() == original


async def test_edit_count_mismatch_and_replace_all(ctx: ToolContext, workspace: Path) -> None:
    p = workspace / "c.txt"
    p.write_text("x = 1\ny = 2\nx = 1\n")
    r = await call(ctx, fs_write.edit_file, path="c.txt", old="x = 1", new="x = 3")
    assert not r.ok and "matches 2 times" in r.text and "lines 1, 3" in r.text and "count=1" in r.text
    assert p.read_text() == "x = 1\ny = 2\nx = 1\n"
    r = await call(ctx, fs_write.edit_file, path="c.txt", old="x = 1", new="x = 3", count=3)
    assert not r.ok and "matches 2 times" in r.text
    r = await call(ctx, fs_write.edit_file, path="c.txt", old="x = 1", new="x = 3", count=0)
    assert r.ok and p.read_text() == "x = 3\ny = 2\nx = 3\n" and "replaced 2 occurrences" in r.text


async def test_edit_keeps_bytes_that_are_not_utf8_and_handles_crlf(ctx: ToolContext, workspace: Path) -> None:
    p = workspace / "w.txt"
    p.write_bytes(b"caf\xe9\r\nold line\r\nend\r\n")
    r = await call(ctx, fs_write.edit_file, path="w.txt", old="old line\nend", new="new line\nend")
    assert r.ok, r.text
    assert p.read_bytes() == b"caf\xe9\r\nnew line\r\nend\r\n"


async def test_edit_missing_and_binary(ctx: ToolContext, workspace: Path) -> None:
    r = await call(ctx, fs_write.edit_file, path="none.txt", old="a", new="b")
    assert not r.ok and "write_file" in r.text
    (workspace / "b.bin").write_bytes(b"\x00\x01a")
    r = await call(ctx, fs_write.edit_file, path="b.bin", old="a", new="b")
    assert not r.ok and "binary" in r.text
    assert isinstance(fs_write.edit_file.parse_arguments({"path": "x", "old": "", "new": "y"}), ToolResult)


async def test_diff_counts_lines_that_look_like_headers(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "d.txt").write_text("--- keep\n-- old\n")
    text = preview(ctx, fs_write.write_file, path="d.txt", content="--- keep\n+++ new\nno newline")
    assert text.startswith("overwrite d.txt: +2 -1 lines")
    assert "\n--- old\n" in text and "\n++++ new\n" in text and "+no newline\n\\ No newline at end of file\n" in text


async def test_create_never_clobbers_a_file_that_appears_meanwhile(ctx: ToolContext, workspace: Path) -> None:
    plan = fs_write._plan_write(ctx, "late.txt", "mine\n", "create")
    assert isinstance(plan, fs_write._Change)
    (workspace / "late.txt").write_text("theirs\n")  # appears between the approval and the write
    r = fs_write._commit("late.txt", plan, True, "Created")
    assert not r.ok and "meanwhile" in r.text
    assert (workspace / "late.txt").read_text() == "theirs\n" and sorted(os.listdir(workspace)) == ["late.txt"]


async def test_new_file_gets_the_umask_mode(ctx: ToolContext, workspace: Path) -> None:
    mask = os.umask(0o027)
    try:
        r = await call(ctx, fs_write.write_file, path="n.txt", content="x", mode="create")
    finally:
        os.umask(mask)
    assert r.ok and stat.S_IMODE((workspace / "n.txt").stat().st_mode) == 0o640
