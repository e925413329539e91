"""Custom slash commands: files in the config directory and in the project, arguments, shadowing, the guard."""

from __future__ import annotations

from pathlib import Path

import pytest

from swebash_ai.agent.custom_commands import BUILTIN_COMMANDS, load_commands, parse_file
from swebash_ai.agent.user_prompt import prepare_prompt
from swebash_ai.config.settings import load_settings
from swebash_ai.safety.paths import PathPolicy
from swebash_ai.tools.registry import ToolContext

SECRET = "CANARY-COMMAND-4a7e"


@pytest.fixture
def dirs(workspace: Path, isolated_env: Path) -> tuple[Path, Path, Path]:
    """(home, user commands, project commands); the workspace is a repository."""
    home = isolated_env
    (workspace / ".git").mkdir()
    user = home / "config" / "commands"
    project = workspace / ".swebash-ai" / "commands"
    user.mkdir(parents=True)
    project.mkdir(parents=True)
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text(f"KEY {SECRET}\n")
    return home, user, project


def _load(workspace: Path, home: Path) -> object:
    return load_commands(workspace, home / "config", PathPolicy(roots=[workspace], home=home))


def test_front_matter_gives_the_description() -> None:
    assert parse_file("---\ndescription: Review the diff\nallowed-tools: run_command\n---\nReview $ARGUMENTS\n") \
        == ("Review the diff", "Review $ARGUMENTS\n")
    assert parse_file("No front matter\n") == ("", "No front matter\n")
    assert parse_file("---\nnever closed\n") == ("", "---\nnever closed\n")


def test_both_places_arguments_and_shadowing(workspace: Path, dirs: tuple[Path, Path, Path]) -> None:
    home, user, project = dirs
    (user / "explain.md").write_text("---\ndescription: Explain simply\n---\nExplain $ARGUMENTS to a child.\n")
    (user / "review.md").write_text("User review of $ARGUMENTS\n")
    (project / "review.md").write_text("---\ndescription: Project review\n---\nReview $ARGUMENTS per CONTRIBUTING.\n")
    (project / "Fix-Bug.md").write_text("Fix the bug.")
    found = _load(workspace, home)
    assert sorted(found.commands) == ["explain", "fix-bug", "review"]
    explain, review, fix = found.get("explain"), found.get("/REVIEW"), found.get("fix-bug")
    assert explain.scope == "user" and explain.description == "Explain simply"
    assert explain.expand("monads") == "Explain monads to a child."
    assert review.scope == "project" and review.shadows == user / "review.md"
    assert "shadows" in review.origin and review.expand("HEAD~1") == "Review HEAD~1 per CONTRIBUTING."
    assert fix.expand("in parser.py") == "Fix the bug.\n\nin parser.py"  # no $ARGUMENTS: they follow the text
    assert found.notices == ()


def test_builtins_win_and_bad_files_are_reported(workspace: Path, dirs: tuple[Path, Path, Path]) -> None:
    home, user, project = dirs
    (user / "help.md").write_text("Not the help.\n")
    (project / "steal.md").symlink_to(home / ".ssh" / "id_rsa")
    (project / "away.md").symlink_to(user / "help.md")  # a project file must stay in the project
    (project / "bad name.md").write_text("x")
    found = _load(workspace, home)
    assert found.commands == {}
    joined = "\n".join(found.notices)
    assert "/help is a built-in command" in joined
    assert "steal.md" in joined and "credentials" in joined
    assert "away.md" in joined and "outside" in joined
    assert "bad name.md" in joined
    assert SECRET not in joined


def test_prepare_expands_a_command_and_its_mentions(workspace: Path, dirs: tuple[Path, Path, Path]) -> None:
    home, user, project = dirs
    (workspace / "app.py").write_text("print(1)\n")
    (home / "private.txt").write_text("mine\n")
    (project / "look.md").write_text("Look at @app.py and @~/private.txt, then $ARGUMENTS\n")
    (user / "mine.md").write_text("Read @~/private.txt\n")
    (project / "run.md").write_text("!touch canary\n")
    ctx = ToolContext(settings=load_settings().settings, cwd=workspace,
                      path_policy=PathPolicy(roots=[workspace], home=home))
    commands = _load(workspace, home)
    got = prepare_prompt("/look say hi", ctx, commands)
    assert got.command is not None and got.command.name == "look"
    assert got.text.startswith("Look at @app.py and @~/private.txt, then say hi")
    assert [a.path for a in got.attachments] == ["app.py"]  # a project command stays inside the project
    assert "outside" in got.notices[0]
    assert [a.path for a in prepare_prompt("/mine", ctx, commands).attachments] == ["~/private.txt"]
    assert prepare_prompt("/run", ctx, commands).text == "!touch canary"  # text for the model, never run
    assert prepare_prompt("/help", ctx, commands, builtins=BUILTIN_COMMANDS).command is None
    assert prepare_prompt("/unknown x", ctx, commands).text == "/unknown x"
