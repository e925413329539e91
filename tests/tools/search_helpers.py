"""Helpers of the search tests (a module of its own: several conftest.py files share that name)."""

from __future__ import annotations

from pathlib import Path


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content)
