"""The language-server tests' fixture: diagnostics turned on (the suite's default is off)."""

from __future__ import annotations

import pytest


@pytest.fixture
def lsp_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWEBASH_AI_LSP_DIAGNOSTICS", "edit")
