"""Fixtures of the tools tests: a context on an isolated workspace, and a small tree for the search tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from search_helpers import write

from swebash_ai.config.settings import load_settings
from swebash_ai.safety.paths import PathPolicy
from swebash_ai.tools.registry import ToolContext


@pytest.fixture
def ctx(workspace: Path, isolated_env: Path) -> ToolContext:
    return ToolContext(
        settings=load_settings().settings,
        cwd=workspace,
        path_policy=PathPolicy(roots=[workspace], home=isolated_env),
        command_policy=None,
    )


@pytest.fixture
def tree(workspace: Path) -> Path:
    write(
        workspace,
        {
            "src/app.py": "import os\n\ndef main():\n    print('Hello World')\n    return 0\n",
            "src/util.py": "def helper():\n    return 'hello again'\n",
            "docs/readme.md": "# Hello\nSay HELLO to everyone.\n",
            "data.bin": b"\x00\x01hello\x00binary",
            ".git/config": "[remote] hello = origin\n",
            ".env": "API_TOKEN=hello-secret-123\n",
            "src/.env.local": "hello=local-secret\n",
            "notes.txt": "nothing here\n",
        },
    )
    return workspace
