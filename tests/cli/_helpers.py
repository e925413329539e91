"""Shared bits of the command-line tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

needs_exec = pytest.mark.skipif(
    importlib.util.find_spec("swebash_ai.tools.exec") is None, reason="swebash_ai.tools.exec is not built yet"
)


def command(*args: str) -> list[str]:
    """The real entry point, as a user runs it."""
    return [sys.executable, "-m", "swebash_ai", *args]
