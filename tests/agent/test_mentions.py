"""@path mentions: what counts as one, what is attached, and what the guard keeps out."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from swebash_ai.agent.mentions import expand_mentions, find_mentions, split_attachments
from swebash_ai.config.settings import load_settings
from swebash_ai.safety.paths import PathPolicy
from swebash_ai.tools.registry import ToolContext

SECRET = "CANARY-MENTION-91d3"


@pytest.fixture
def ctx(workspace: Path, isolated_env: Path) -> ToolContext:
    home = isolated_env
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{SECRET}\n")
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("import os\nprint('hi')\n")
    (workspace / "notes dir").mkdir()
    (workspace / "notes dir" / "todo.md").write_text("- ship it\n")
    return ToolContext(settings=load_settings().settings, cwd=workspace,
                       path_policy=PathPolicy(roots=[workspace], home=home))


# (text, the paths found) - why
FOUND = [
    ("explain @src/app.py", ["src/app.py"]),  # the plain case
    ("mail user@example.com now", []),  # an @ inside a word is an e-mail address, not a mention
    ("see @src/app.py.", ["src/app.py"]),  # sentence punctuation is not part of the path
    ('read @"notes dir/todo.md" please', ["notes dir/todo.md"]),  # a quoted path may hold spaces
    ("(@src/app.py)", ["src/app.py"]),  # an opening bracket starts a word too
    ("use `@dataclass` here", []),  # inline code is code
    ("```\n@decorator\ndef f(): ...\n```\nand @src", ["src"]),  # so is a fenced block
    ("@a @b", ["a", "b"]),  # at the very start, and more than one
]


@pytest.mark.parametrize(("text", "paths"), FOUND, ids=[t for t, _ in FOUND])
def test_what_is_a_mention(text: str, paths: list[str]) -> None:
    assert [m.path for m in find_mentions(text)] == paths


def test_a_file_is_attached_with_its_path_and_numbered_lines(ctx: ToolContext) -> None:
    got = expand_mentions("explain @src/app.py", ctx)
    assert got.notices == ()
    (att,) = got.attachments
    assert att.path == "src/app.py" and att.summary.startswith("2 lines")
    assert got.text.startswith("explain @src/app.py\n\n[Attached by the user: src/app.py (2 lines")
    assert "   1| import os\n   2| print('hi')" in got.text
    assert split_attachments(got.text) == ("explain @src/app.py", [att.line])


def test_a_folder_attaches_its_listing(ctx: ToolContext) -> None:
    got = expand_mentions("what is in @src and @'notes dir'?", ctx)
    assert [a.kind for a in got.attachments] == ["folder", "folder"]
    assert "app.py" in got.attachments[0].body and "todo.md" in got.attachments[1].body


def test_missing_and_protected_paths_stay_text_with_a_notice(ctx: ToolContext) -> None:
    got = expand_mentions("compare @nope.py with @~/.ssh/id_rsa", ctx)
    assert got.attachments == () and got.text == "compare @nope.py with @~/.ssh/id_rsa"
    missing, denied = got.notices
    assert missing.startswith("@nope.py is not attached") and "does not exist" in missing
    assert denied.startswith("@~/.ssh/id_rsa is not attached") and "credentials" in denied
    assert SECRET not in got.text + "".join(got.notices)


def test_a_symlink_to_a_protected_file_is_refused(ctx: ToolContext, isolated_env: Path) -> None:
    (ctx.cwd / "innocent.txt").symlink_to(isolated_env / ".ssh" / "id_rsa")
    os.link(isolated_env / ".ssh" / "id_rsa", ctx.cwd / "hard.txt")
    got = expand_mentions("look at @innocent.txt and @hard.txt", ctx)
    assert got.attachments == ()
    assert len(got.notices) == 2 and all("credentials" in n for n in got.notices)
    assert SECRET not in got.text


def test_within_keeps_mentions_inside_a_folder(ctx: ToolContext, isolated_env: Path) -> None:
    (isolated_env / "outside.txt").write_text("elsewhere\n")
    got = expand_mentions("@~/outside.txt @src/app.py", ctx, within=[ctx.cwd])
    assert [a.path for a in got.attachments] == ["src/app.py"]
    assert "outside" in got.notices[0]


def test_a_file_over_the_size_limit_is_refused_whole(ctx: ToolContext) -> None:
    (ctx.cwd / "big.log").write_text("x" * 5000)
    got = expand_mentions("@big.log", ctx, max_bytes=1000)
    assert got.attachments == () and "larger than" in got.notices[0]
