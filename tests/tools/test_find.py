"""find_files through the real loop (a session on the scripted provider): globs with ``**``, newest first,
.gitignore honoured, and protected files never listed."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any

import pytest

from swebash_ai.agent.events import ToolCallFinished
from swebash_ai.config.settings import load_settings
from swebash_ai.providers import scripted
from swebash_ai.providers.scripted import ScriptedProvider
from swebash_ai.session import Session
from swebash_ai.tools.find import glob_to_regex


def write(root: Path, files: dict[str, str], *, oldest_first: bool = False) -> None:
    now = time.time()
    for n, rel in enumerate(files):
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(files[rel])
        if oldest_first:  # later entries are newer, a second apart, whatever the file system's resolution
            os.utime(p, (now - 1000 + n, now - 1000 + n))


async def find(workspace: Path, **args: Any) -> ToolCallFinished:
    """One find_files call chosen by the (scripted) model, run by a real session's loop."""
    provider = ScriptedProvider([scripted.calls(("find_files", args)), scripted.text("done")])
    session = Session(load_settings(), provider=provider,
                      cwd=workspace, probe_ollama=False)
    finished = [e async for e in session.run("find them") if isinstance(e, ToolCallFinished)]
    assert len(finished) == 1
    # What the model read back is the tool message in the next request.
    tool_msg = [m for m in provider.requests[1]["messages"] if m["role"] == "tool"][-1]
    assert tool_msg["content"] == finished[0].result.for_model()
    return finished[0]


def listed(event: ToolCallFinished) -> list[str]:
    return [line for line in event.result.text.splitlines()[1:] if line and not line.startswith(("[", "Hint"))]


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("*.py", "a.py", True),
        ("*.py", "src/a.py", False),  # the regex itself is whole-path; the tool applies name-only patterns
        ("**/*.py", "a.py", True),  # ** covers zero directories
        ("**/*.py", "src/deep/a.py", True),
        ("src/**/test_*.py", "src/test_x.py", True),
        ("src/**/test_*.py", "src/a/b/test_x.py", True),
        ("src/**/test_*.py", "lib/src/test_x.py", False),  # anchored at the searched directory
        ("src/*.py", "src/a/b.py", False),  # * never crosses a /
        ("*.{ts,tsx}", "x.tsx", True),
        ("*.{ts,tsx}", "x.js", False),
        ("file[0-9].txt", "file7.txt", True),
        ("file[!0-9].txt", "filex.txt", True),
        ("a**b", "a/x/b", False),  # ** inside a name is a plain *
    ],
)
def test_glob_translation(pattern: str, path: str, matches: bool) -> None:
    assert (glob_to_regex(pattern).match(path) is not None) is matches


async def test_double_star_and_newest_first(workspace: Path) -> None:
    write(workspace, {"src/old.py": "", "src/pkg/mid.py": "", "README.md": "", "src/pkg/deep/new.py": ""},
          oldest_first=True)
    done = await find(workspace, pattern="src/**/*.py")
    assert listed(done) == ["src/pkg/deep/new.py", "src/pkg/mid.py", "src/old.py"]
    assert "newest first" in done.result.text and done.result.ok
    by_name = await find(workspace, pattern="*.py", path="src/pkg")
    assert listed(by_name) == ["src/pkg/deep/new.py", "src/pkg/mid.py"]  # paths usable as read_file paths


async def test_protected_files_are_never_listed(workspace: Path, isolated_env: Path) -> None:
    write(workspace, {".env": "TOKEN=x", "sub/.env": "TOKEN=y", "sub/.env.local": "K=1", "id_rsa": "KEY",
                      "app.py": "", "sub/config.env.py": ""})
    (workspace / "linked").symlink_to(workspace / ".env")  # a link inside the tree to a protected file
    done = await find(workspace, pattern="**", include_ignored=True)
    names = listed(done)
    assert "app.py" in names and "sub/config.env.py" in names
    assert not [n for n in names if re.search(r"(^|/)(\.env|id_rsa|linked)", n)], names
    assert ".env" not in done.result.text.replace("config.env.py", "")
    # Asking for it by name says nothing more than "no file".
    exact = await find(workspace, pattern=".env*")
    assert listed(exact) == [] and exact.result.text.startswith("0 files")


async def test_gitignore_is_honoured_unless_asked(workspace: Path) -> None:
    (workspace / ".git").mkdir()
    write(workspace, {
        ".gitignore": "build/\n*.log\n!keep.log\n",
        "src/.gitignore": "generated_*.py\n",
        "src/app.py": "", "src/generated_x.py": "", "build/out.py": "", "debug.log": "", "keep.log": "",
        ".git/config": "",
    })
    done = await find(workspace, pattern="**/*")
    names = listed(done)
    assert sorted(names) == [".gitignore", "keep.log", "src/.gitignore", "src/app.py"]
    assert "ignored by .gitignore" in done.result.text
    everything = await find(workspace, pattern="**/*", include_ignored=True)
    assert {"build/out.py", "debug.log", "src/generated_x.py"} <= set(listed(everything))
    assert not [n for n in listed(everything) if n.startswith(".git/")]  # .git is never entered


async def test_a_gitignore_is_read_only_through_the_guard(workspace: Path) -> None:
    """A protected file read as a .gitignore would leak through what the listing hides: a symlinked
    .gitignore (to .env, or even to a plain file, as git does not follow one) and one hard-linked to .env
    are not read. The same patterns in a plain .gitignore do hide the file, so the test can fail."""
    write(workspace, {".env": "*.py\n", "plain/.gitignore": "*.py\n", "plain/a.py": "", "shared.txt": "*.py\n",
                      "sym/a.py": "", "sym_plain/a.py": "", "hard/a.py": ""})
    (workspace / "sym" / ".gitignore").symlink_to(workspace / ".env")
    (workspace / "sym_plain" / ".gitignore").symlink_to(workspace / "shared.txt")
    os.link(workspace / ".env", workspace / "hard" / ".gitignore")
    names = listed(await find(workspace, pattern="*.py"))
    assert sorted(names) == ["hard/a.py", "sym/a.py", "sym_plain/a.py"]


async def test_a_gitignore_above_the_searched_directory_applies(workspace: Path) -> None:
    (workspace / ".git").mkdir()
    write(workspace, {".gitignore": "sub/cache/\n", "sub/cache/a.txt": "", "sub/b.txt": ""})
    done = await find(workspace, pattern="*.txt", path="sub")
    assert listed(done) == ["sub/b.txt"]


async def test_a_directory_asked_for_by_name_is_listed_even_if_ignored_above(workspace: Path) -> None:
    (workspace / ".git").mkdir()
    write(workspace, {".gitignore": "/vendor/\n", "vendor/lib/.gitignore": "*.tmp\n", "vendor/lib/a.py": "",
                      "vendor/lib/b.tmp": ""})
    assert listed(await find(workspace, pattern="**/*")) == [".gitignore"]
    inside = await find(workspace, pattern="**/*", path="vendor")
    assert sorted(listed(inside)) == ["vendor/lib/.gitignore", "vendor/lib/a.py"]  # its own ignores still apply
    assert "vendor itself is ignored by a .gitignore above it" in inside.result.text


async def test_symlinks_leaving_the_tree_are_skipped(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, {"secret.txt": "x"})
    write(workspace, {"inside.txt": ""})
    (workspace / "out.txt").symlink_to(outside / "secret.txt")
    (workspace / "outdir").symlink_to(outside)
    done = await find(workspace, pattern="**/*.txt")
    assert listed(done) == ["inside.txt"]
    assert "2 symlinks leaving the tree skipped" in done.result.text


async def test_the_answer_is_capped_with_a_count_of_the_rest(workspace: Path) -> None:
    write(workspace, {f"f{n:02}.txt": "" for n in range(30)}, oldest_first=True)
    done = await find(workspace, pattern="*.txt", max_results=5)
    assert listed(done) == [f"f{n:02}.txt" for n in (29, 28, 27, 26, 25)]
    assert "[25 more not shown (max_results=5)" in done.result.text and done.result.truncated


async def test_bad_input_gets_a_one_line_error(workspace: Path) -> None:
    write(workspace, {"a.txt": ""})
    for args, words in (
        ({"pattern": "/etc/*"}, "relative to path"),
        ({"pattern": "../*"}, "'..' is not allowed"),
        ({"pattern": "*", "path": "missing"}, "not found"),
        ({"pattern": "*", "path": "a.txt"}, "is a file"),
    ):
        done = await find(workspace, **args)
        assert not done.result.ok and words in done.result.text and "\n" not in done.result.text
