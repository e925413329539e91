"""Fixtures of the MCP tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture
def config_toml() -> Path:
    """The isolated config file (SWEBASH_AI_HOME/config.toml)."""
    path = Path(os.environ["SWEBASH_AI_HOME"]) / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path
