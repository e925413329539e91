"""``swebash-ai help TOPIC``: every page ``--help`` names is packaged and printed, for a pip-installed copy."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from swebash_ai.commands.help_docs import run_help, topics
from swebash_ai.errors import UsageError
from swebash_ai.frontends.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]


def _all_help(parser: object) -> str:
    import argparse

    assert isinstance(parser, argparse.ArgumentParser)
    text = parser.format_help()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                text += _all_help(child)
    return text


def test_every_page_the_help_names_is_printed_by_help_topic() -> None:
    named = set(re.findall(r"docs/([a-z_-]+)\.md", _all_help(build_parser())))
    assert {"approvals", "cli", "configuration", "shell"} <= named
    for name in named:
        out = io.StringIO()
        assert run_help(name, out) == 0
        assert out.getvalue() == (ROOT / "docs" / f"{name}.md").read_text(encoding="utf-8")


def test_the_pages_are_package_data() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "docs/*.md" in data["tool"]["setuptools"]["package-data"]["swebash_ai"]
    assert topics() == sorted(p.stem for p in (ROOT / "docs").glob("*.md"))


def test_help_lists_the_pages_and_refuses_an_unknown_one() -> None:
    out = io.StringIO()
    run_help(None, out)
    assert "  approvals\n" in out.getvalue() and "  tui\n" in out.getvalue()
    with pytest.raises(UsageError, match="No documentation page 'nope'"):
        run_help("nope", io.StringIO())


def test_the_command_prints_a_page() -> None:
    done = subprocess.run([sys.executable, "-m", "swebash_ai", "help", "docs/undo.md"], capture_output=True,
                          text=True, check=False, cwd=ROOT)
    assert done.returncode == 0
    assert done.stdout.startswith("# Checkpoints and undo")
