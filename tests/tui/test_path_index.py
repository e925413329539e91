"""@path completion without a UI: what is indexed, how queries rank, where a mention being typed starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from swebash_ai.frontends.tui.path_index import Candidate, PathIndex, mention_at
from swebash_ai.safety.paths import PathPolicy


@pytest.fixture
def index(workspace: Path, isolated_env: Path) -> PathIndex:
    for rel in ("src/app.py", "src/api/routes.py", "tests/test_app.py", "lib/vendor/x.js", "docs/a b.md",
                "pkg/.gitignore", "pkg/out.log", "pkg/keep.py", ".git/config", "id_rsa", "server.key"):
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text("x\n")
    (workspace / ".gitignore").write_text("lib/\n")
    (workspace / "pkg" / ".gitignore").write_text("*.log\n")
    return PathIndex(workspace, PathPolicy(roots=[workspace], home=isolated_env)).build()


def test_protected_and_git_are_not_indexed_and_gitignore_marks(index: PathIndex) -> None:
    paths = {c.path: c for c in index.entries}
    assert "id_rsa" not in paths and "server.key" not in paths and ".git/" not in paths
    assert paths["lib/"].ignored and "lib/vendor/" not in paths  # an ignored folder is not entered
    assert paths["pkg/out.log"].ignored and not paths["pkg/keep.py"].ignored  # a nested .gitignore applies


# (query, the first choice) - why
RANKED = [
    ("", "docs/"),  # nothing typed: the top level, folders first
    ("app", "src/app.py"),  # a name prefix beats test_app.py's substring
    ("s/ap", "src/api/"),  # segment by segment; a folder before a file of the same quality
    ("s/app", "src/app.py"),
    ("src/", "src/api/"),  # a trailing slash lists the folder
    ("tapp", "tests/test_app.py"),  # a subsequence still matches
    ("li", "lib/"),  # a gitignored path is still offered when nothing else matches
]


@pytest.mark.parametrize(("query", "first"), RANKED, ids=[q or "empty" for q, _ in RANKED])
def test_ranking(index: PathIndex, query: str, first: str) -> None:
    assert index.candidates(query)[0].path == first


def test_gitignored_comes_last(index: PathIndex) -> None:
    assert [c.path for c in index.candidates("")][-1] == "lib/"


# (text, cursor, expected) - why
MENTIONS = [
    ("see @src/a", None, (4, "src/a")),
    ("mail me@src", None, None),  # inside a word: an e-mail address
    ("@", None, (0, "")),
    ('open @"docs/a b', None, (5, "docs/a b")),  # an open quote keeps the space
    ('open @"docs/a b.md" now', None, None),  # a closed quote is a finished mention
    ("@src/app.py and more", 5, (0, "src/")),  # the cursor, not the end, decides
    ("@src/app.py done", None, None),
]


@pytest.mark.parametrize(("text", "cursor", "expected"), MENTIONS, ids=[m[0] for m in MENTIONS])
def test_mention_at(text: str, cursor: int | None, expected: tuple[int, str] | None) -> None:
    assert mention_at(text, len(text) if cursor is None else cursor) == expected


def test_insertion_quotes_spaces_and_keeps_folders_open() -> None:
    assert Candidate("docs/a b.md", False).insertion == '@"docs/a b.md" '
    assert Candidate("src/", True).insertion == "@src/"


def test_command_descriptions_never_reach_the_screen_as_escapes(workspace: Path, isolated_env: Path) -> None:
    from swebash_ai.agent.custom_commands import load_commands
    from swebash_ai.frontends.tui.user_input import help_rows, prompt_hints

    folder = workspace / ".swebash-ai" / "commands"
    folder.mkdir(parents=True)
    (folder / "t.md").write_text("---\ndescription: hi\x1b]0;pwned\x07 there\n---\nbody\n")
    found = load_commands(workspace, isolated_env / "cfg", PathPolicy(roots=[workspace], home=isolated_env))
    (desc,) = [d for _a, d in prompt_hints(found).values()]
    rows, _notes = help_rows(found)
    for text in (desc, rows[0][1]):
        assert "\x1b" not in text and "\x07" not in text and "\\x1b" in text
