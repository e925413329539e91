"""Project instructions: ``AGENTS.md`` files put into the system prompt.

Contract:
    :func:`load_instructions` reads a personal ``AGENTS.md`` in the config directory, then ``AGENTS.md`` in
    the repository root and every directory below it down to the working directory (the nearest last, so
    it wins when two disagree). Without a repository (no ``.git`` above), only the working directory's file
    is read. The total text is capped at ``max_chars``: the nearest files keep their text first, farther
    ones are cut, and each cut is named in :attr:`Instructions.warnings`. A file that cannot be read (no
    permission, not UTF-8, a directory) lands in :attr:`Instructions.problems` and never stops a session.

Why:
    Every project has conventions (how to run the tests, what not to touch) that the model would otherwise
    have to be told each session. The files are re-read when a session is built, never cached, so an edit
    applies to the next session. Pure standard library: the core stays light.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

FILE_NAME = "AGENTS.md"


@dataclass(frozen=True)
class InstructionFile:
    """One file in force: where it is, whose it is, the text sent (possibly cut)."""

    path: Path
    scope: str
    text: str
    cut: bool = False


@dataclass(frozen=True)
class Instructions:
    files: tuple[InstructionFile, ...] = ()
    warnings: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    chars: int = field(default=0)

    def render(self) -> str:
        """The block for the system prompt ("" when no file is in force), one heading per file."""
        if not self.files:
            return ""
        parts = [
            "# Project instructions\n"
            "The user and the project maintainers wrote these instructions. Follow them; when two disagree, "
            "the later (closer to the working directory) one wins. Safety rules and approvals still apply."
        ]
        for f in self.files:
            note = " (cut to fit the size limit)" if f.cut else ""
            parts.append(f"## {f.scope}: {f.path}{note}\n{f.text.strip()}")
        return "\n\n".join(parts)


def repository_root(cwd: Path) -> Path | None:
    """The nearest directory at or above ``cwd`` holding ``.git`` (a directory or a worktree's file)."""
    for folder in (cwd, *cwd.parents):
        if (folder / ".git").exists():
            return folder
    return None


def instruction_paths(cwd: Path, config_dir: Path) -> list[tuple[Path, str]]:
    """(path, scope) of every candidate file, in prompt order: personal, root ... nearest."""
    cwd = cwd.resolve()
    root = repository_root(cwd)
    chain = [cwd]
    if root is not None:
        chain = [folder for folder in (cwd, *cwd.parents) if folder == root or root in folder.parents]
    found: list[tuple[Path, str]] = []
    personal = config_dir / FILE_NAME
    if personal.exists() or personal.is_symlink():
        found.append((personal, "Personal instructions"))
    for folder in reversed(chain):
        path = folder / FILE_NAME
        if (path.exists() or path.is_symlink()) and path.resolve() != personal.resolve():
            found.append((path, "Project instructions" if folder == (root or cwd) else "Directory instructions"))
    return found


def _read(path: Path) -> str:
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a directory")
    return path.read_text(encoding="utf-8")


def load_instructions(cwd: Path, config_dir: Path, max_chars: int) -> Instructions:
    """Read the instruction files for a session in ``cwd`` (see the module docstring)."""
    texts: list[tuple[Path, str, str]] = []
    problems: list[str] = []
    for path, scope in instruction_paths(cwd, config_dir):
        try:
            texts.append((path, scope, _read(path)))
        except (OSError, UnicodeDecodeError) as exc:
            reason = "not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else (exc.strerror or str(exc))
            problems.append(f"Cannot read instructions {path}: {reason}; it is ignored.")
    return _capped(texts, max_chars, problems)


def _capped(texts: Sequence[tuple[Path, str, str]], max_chars: int, problems: list[str]) -> Instructions:
    """Keep the nearest files whole first (they win), cut the farther ones to what is left."""
    left = max_chars
    kept: list[InstructionFile] = []
    warnings: list[str] = []
    for path, scope, text in reversed(texts):
        if not text.strip():
            continue
        if len(text) <= left:
            kept.append(InstructionFile(path, scope, text))
            left -= len(text)
            continue
        if left > 0:
            kept.append(InstructionFile(path, scope, text[:left] + "\n[…cut]", cut=True))
        shown = max(left, 0)
        warnings.append(
            f"Instructions {path} are {len(text)} characters; only {shown} are sent "
            f"(instructions_max_chars = {max_chars})."
        )
        left = 0
    kept.reverse()
    return Instructions(tuple(kept), tuple(warnings), tuple(problems), sum(len(f.text) for f in kept))
