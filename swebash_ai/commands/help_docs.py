"""``swebash-ai help [TOPIC]``: the documentation, from the installed package.

``--help`` names pages such as ``docs/approvals.md``; a copy installed with pip has no ``docs/`` folder, so
the pages are packaged (``swebash_ai/docs`` is the repository's ``docs/``, shipped as package data) and
this command lists them or prints one: ``swebash-ai help approvals``.
"""

from __future__ import annotations

from importlib import resources
from typing import TextIO

from swebash_ai.errors import UsageError


def topics() -> list[str]:
    """The names of the packaged pages (``approvals``, ``cli``...), sorted."""
    folder = resources.files("swebash_ai") / "docs"
    if not folder.is_dir():
        return []
    return sorted(entry.name.removesuffix(".md") for entry in folder.iterdir() if entry.name.endswith(".md"))


def run_help(topic: str | None, out: TextIO) -> int:
    """Print the page ``topic`` (``docs/approvals.md``, ``approvals.md`` and ``approvals`` all name it), or
    the list of pages without one. Raises :class:`UsageError` for a page that does not exist."""
    found = topics()
    if topic is None:
        print("Documentation pages (swebash-ai help TOPIC prints one):", file=out)
        for name in found:
            print(f"  {name}", file=out)
        return 0
    name = topic.strip().removeprefix("docs/").removesuffix(".md").lower()
    if name not in found:
        raise UsageError(f"No documentation page '{topic}'. Pages: {', '.join(found) or 'none installed'}.")
    print((resources.files("swebash_ai") / "docs" / f"{name}.md").read_text(encoding="utf-8"), end="", file=out)
    return 0
