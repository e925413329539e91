"""The search tool on real trees: matching, filters, limits, and what it must never show."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
from pathlib import Path
from typing import Any

import pytest
from search_helpers import write

from swebash_ai.config.settings import load_settings
from swebash_ai.safety.paths import PathPolicy
from swebash_ai.tools import search as search_mod
from swebash_ai.tools import search_rg
from swebash_ai.tools.guard import PolicyGate
from swebash_ai.tools.registry import ToolContext, ToolResult

search = search_mod.search


@pytest.fixture(autouse=True, params=["ripgrep", "walk"])
def lane(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test runs in both lanes: ripgrep proposing candidates, and the Python walk (no ripgrep)."""
    if request.param == "walk":
        monkeypatch.setattr(search_rg, "ripgrep", lambda: None)
    elif search_rg.ripgrep() is None:
        pytest.skip("ripgrep is not installed")
    return str(request.param)


async def run(ctx: ToolContext, **kw: Any) -> ToolResult:
    args = search.parse_arguments(kw)
    assert not isinstance(args, ToolResult), args.content
    return await asyncio.wait_for(search.invoke(ctx, args), timeout=5)


def hits(result: ToolResult) -> list[tuple[str, int, str]]:
    """(file, line, text) of every matching line in the answer."""
    out: list[tuple[str, int, str]] = []
    current = ""
    for line in result.text.splitlines():
        if m := re.match(r"^(\S.*) \(\d+ matching lines?\)$", line):
            current = m.group(1)
        elif m := re.match(r"^\s*(\d+): (.*)$", line):
            out.append((current, int(m.group(1)), m.group(2)))
    return out


async def test_literal_case_insensitive_by_default(ctx: ToolContext, tree: Path, lane: str) -> None:
    r = await run(ctx, pattern="hello")
    assert r.ok
    assert hits(r) == [
        ("docs/readme.md", 1, "# Hello"),
        ("docs/readme.md", 2, "Say HELLO to everyone."),
        ("src/app.py", 4, "    print('Hello World')"),
        ("src/util.py", 2, "    return 'hello again'"),
    ]
    first = r.text.splitlines()[0]
    assert first.startswith("4 matching lines in 3 files for 'hello' under .")
    if lane == "walk":  # the walk sees every binary file; ripgrep skips them without saying
        assert "skipped: 1 binary" in r.text


async def test_never_shows_secrets_binary_or_git(ctx: ToolContext, tree: Path) -> None:
    r = await run(ctx, pattern="secret")
    assert r.ok and "No matches" in r.text and "secret" not in r.text.replace("'secret'", "")
    r = await run(ctx, pattern="hello")
    assert ".env" not in r.text and ".git" not in r.text and "data.bin" not in r.text
    # searching the secret directly is denied like any other access
    r = await run(ctx, pattern="hello", path=".env")
    assert r.status == "denied"
    args = search.parse_arguments({"pattern": "x", "path": ".env"})
    assert not isinstance(args, ToolResult) and search.check(ctx, args).decision == "deny"


async def test_case_sensitive(ctx: ToolContext, tree: Path) -> None:
    r = await run(ctx, pattern="Hello", case_sensitive=True)
    assert [(f, n) for f, n, _ in hits(r)] == [("docs/readme.md", 1), ("src/app.py", 4)]


async def test_regex(ctx: ToolContext, tree: Path) -> None:
    r = await run(ctx, pattern=r"^def \w+\(\):$", regex=True)
    assert [(f, n) for f, n, _ in hits(r)] == [("src/app.py", 3), ("src/util.py", 1)]
    r = await run(ctx, pattern="return [0-9]", regex=True, case_sensitive=True)
    assert hits(r) == [("src/app.py", 5, "    return 0")]
    bad = await run(ctx, pattern="(unclosed", regex=True)
    assert not bad.ok and "Invalid regular expression" in bad.text and "regex=false" in bad.text


async def test_literal_special_characters_are_not_regex(ctx: ToolContext, tree: Path) -> None:
    r = await run(ctx, pattern="main()")
    assert hits(r) == [("src/app.py", 3, "def main():")]


async def test_include_and_exclude(ctx: ToolContext, tree: Path) -> None:
    r = await run(ctx, pattern="hello", include=["*.py"])
    assert {f for f, _, _ in hits(r)} == {"src/app.py", "src/util.py"}
    r = await run(ctx, pattern="hello", exclude=["src"])
    assert {f for f, _, _ in hits(r)} == {"docs/readme.md"}
    r = await run(ctx, pattern="hello", include=["src/*"], exclude=["util.py"])
    assert {f for f, _, _ in hits(r)} == {"src/app.py"}


async def test_context_lines_and_groups(ctx: ToolContext, workspace: Path) -> None:
    write(workspace, {"f.txt": "".join(f"{'MATCH' if i in (3, 4, 12) else 'line'} {i}\n" for i in range(1, 16))})
    r = await run(ctx, pattern="match", context_lines=1)
    body = r.text.splitlines()[3:]
    assert body == [
        "   2- line 2",
        "   3: MATCH 3",
        "   4: MATCH 4",
        "   5- line 5",
        "  --",
        "  11- line 11",
        "  12: MATCH 12",
        "  13- line 13",
    ]


async def test_max_results_cuts_but_counts_everything(ctx: ToolContext, workspace: Path) -> None:
    write(workspace, {f"f{i}.txt": "needle\nneedle\n" for i in range(5)})
    r = await run(ctx, pattern="needle", max_results=3)
    assert len(hits(r)) == 3 and r.truncated
    assert r.text.startswith("10 matching lines in 5 files")
    assert "showing the first 3 matching lines (max_results=3)" in r.text
    assert r.metadata["matches"] == 10


async def test_skips_large_files_and_links_leaving_the_tree(ctx: ToolContext, workspace: Path, tmp_path: Path,
                                                            lane: str) -> None:
    small = dataclasses.replace(ctx, settings=ctx.settings.model_copy(update={"fs_max_size": 50}))
    outside = tmp_path / "outside.txt"
    outside.write_text("needle outside\n")
    write(workspace, {"big.txt": "needle " * 20, "ok.txt": "needle\n", "inner/real.txt": "needle inner\n"})
    (workspace / "out").symlink_to(outside)
    (workspace / "in").symlink_to(workspace / "inner/real.txt")
    r = await run(small, pattern="needle")
    # Symlinks are never followed: "in" points at inner/real.txt, which is found where it really is.
    assert {f for f, _, _ in hits(r)} == {"ok.txt", "inner/real.txt"}
    assert "outside" not in r.text
    if lane == "walk":  # ripgrep skips these without counting them
        assert "1 over the fs_max_size limit" in r.text and "1 symlinks leaving the tree" in r.text


async def test_symlink_inside_tree_to_a_secret_is_not_searched(
    ctx: ToolContext, workspace: Path, isolated_env: Path
) -> None:
    (isolated_env / ".ssh").mkdir()
    (isolated_env / ".ssh/id_rsa").write_text("needle private key\n")
    write(workspace, {".env": "needle=1\n"})
    (workspace / "alias").symlink_to(workspace / ".env")
    os.link(isolated_env / ".ssh/id_rsa", workspace / "hardlink.txt")  # realpath cannot see this one
    r = await run(ctx, pattern="needle")
    assert r.ok and hits(r) == [] and "1 matching" not in r.text


async def test_single_file_and_missing_path(ctx: ToolContext, tree: Path) -> None:
    r = await run(ctx, pattern="hello", path="src/util.py")
    assert hits(r) == [("util.py", 2, "    return 'hello again'")]
    r = await run(ctx, pattern="hello", path="nowhere")
    assert not r.ok and "not found" in r.text


async def test_unicode_case_insensitive(ctx: ToolContext, workspace: Path) -> None:
    write(workspace, {"u.txt": "Ärger\nkein\nÄRGER groß\n"})
    r = await run(ctx, pattern="ärger")
    assert [n for _, n, _ in hits(r)] == [1, 3]


async def test_outside_workspace_asks(ctx: ToolContext, tmp_path: Path) -> None:
    args = search.parse_arguments({"pattern": "x", "path": str(tmp_path)})
    assert not isinstance(args, ToolResult)
    assert search.check(ctx, args).decision == "ask"
    assert search.describe(args) == f"search {tmp_path} for text 'x'"


async def test_search_runs_off_the_event_loop(ctx: ToolContext, workspace: Path) -> None:
    write(workspace, {f"d{i // 50}/f{i}.txt": "x\n" * 200 for i in range(300)})
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(ticker())
    r = await run(ctx, pattern="x", max_results=1)
    task.cancel()
    assert r.metadata["matches"] == 300 * 200
    assert ticks > 1  # the loop kept running while the walk was in its thread


REGEX_TEXT = "colour here\ncolor there\nfoo bar\nHELLO x\nabef\nabcdef\nzzz_bar\nnothing\n"


@pytest.mark.parametrize(
    ("pattern", "case_sensitive"),
    [
        ("foo|zzz_bar", True),  # alternation: no literal is required, the prefilter must stay out
        ("(?i)HELLO", True),  # an inline flag overrides case_sensitive
        ("colou?r", True),  # optional letter inside the literal run
        ("ab(cd)?ef", True),  # optional group between two literal runs
        ("hello", False),  # case-insensitive literal run
        (r"^\w+ther", True),  # no match at all
    ],
)
async def test_regex_matches_python_re_line_by_line(
    ctx: ToolContext, workspace: Path, pattern: str, case_sensitive: bool
) -> None:
    write(workspace, {"r.txt": REGEX_TEXT})
    flags = 0 if case_sensitive else re.IGNORECASE
    expected = [i for i, line in enumerate(REGEX_TEXT.splitlines(), 1) if re.search(pattern, line, flags)]
    r = await run(ctx, pattern=pattern, regex=True, case_sensitive=case_sensitive)
    assert [n for _, n, _ in hits(r)] == expected


async def test_configured_deny_globs_are_respected(workspace: Path, isolated_env: Path) -> None:
    policy = PathPolicy(roots=[workspace], home=isolated_env, extra_deny=["*.sqlite", "private"])
    ctx = ToolContext(settings=load_settings().settings, cwd=workspace, path_policy=policy)
    write(workspace, {"db.sqlite": "needle\n", "private/a.txt": "needle\n", "pub/b.txt": "needle\n"})
    r = await run(ctx, pattern="needle")
    assert [f for f, _, _ in hits(r)] == ["pub/b.txt"] and r.metadata["searched"] == 1
    gate = PolicyGate(policy)
    assert gate.fast_names  # the stand-in path agrees with the real policy on the probes
    assert gate.denied(str(workspace / "x.SQLITE"), "x.SQLITE", False)


async def test_default_policy_from_settings(workspace: Path, isolated_env: Path) -> None:
    ctx = ToolContext(settings=load_settings().settings, cwd=workspace)  # no path_policy given
    write(workspace, {"a.txt": "needle\n", ".env": "needle\n"})
    r = await run(ctx, pattern="needle")
    assert [f for f, _, _ in hits(r)] == ["a.txt"]


async def test_case_insensitive_finds_every_case(ctx: ToolContext, workspace: Path) -> None:
    write(workspace, {"a.py": "MY_VAR = 1\nmy_var\nMy_Var_2\nmyvar\n", "b.py": "my-var\n"})
    r = await run(ctx, pattern="my_VAR")
    assert [(f, n) for f, n, _ in hits(r)] == [("a.py", 1), ("a.py", 2), ("a.py", 3)]
    r = await run(ctx, pattern=r"my_v\w+ = \d", regex=True)
    assert [(f, n) for f, n, _ in hits(r)] == [("a.py", 1)]
