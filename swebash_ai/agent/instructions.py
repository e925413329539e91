"""Project instructions: ``AGENTS.md`` files put into the system prompt.

Contract:
    :func:`load_instructions` reads a personal ``AGENTS.md`` in the config directory, then ``AGENTS.md`` in
    the repository root and every directory below it down to the working directory (the nearest last, so
    it wins when two disagree). Without a repository (no ``.git`` above), only the working directory's file
    is read. The total text is capped at ``max_chars``: the nearest files keep their text first, farther
    ones are cut, and each cut is named in :attr:`Instructions.warnings`. Every file is read through
    :func:`swebash_ai.safety.unasked.read_unasked`: a file the guard refuses (a link to a protected file, a
    hard link to one, a project file leading outside its repository, a FIFO or device, a file over
    ``fs_max_size``, a symlink loop) lands in :attr:`Instructions.refused`, one that merely cannot be read
    (no permission, not UTF-8) in :attr:`Instructions.problems`; neither ever stops a session.

Why:
    Every project has conventions (how to run the tests, what not to touch) that the model would otherwise
    have to be told each session. The files are re-read when a session is built, never cached, so an edit
    applies to the next session. A repository decides what its ``AGENTS.md`` is (git stores symlinks), and
    the text goes to the provider before any question is asked: hence the guard, and a notice for each
    file left out, never a silent drop.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from swebash_ai.safety.paths import PathPolicy
from swebash_ai.safety.unasked import DEFAULT_MAX_BYTES, UnaskedRefusal, read_unasked

FILE_NAME = "AGENTS.md"


@dataclass(frozen=True)
class InstructionFile:
    """One file in force: where it is, whose it is, the text sent (possibly cut)."""

    path: Path
    scope: str
    text: str
    cut: bool = False


@dataclass(frozen=True)
class RefusedFile:
    """An instruction file the path guard left out, and why (for the user; the model never sees it)."""

    path: Path
    scope: str
    reason: str

    @property
    def message(self) -> str:
        return f"Refused instructions {self.path}: {self.reason}. It is left out."


@dataclass(frozen=True)
class Instructions:
    files: tuple[InstructionFile, ...] = ()
    warnings: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    chars: int = field(default=0)
    refused: tuple[RefusedFile, ...] = ()

    @property
    def notices(self) -> tuple[str, ...]:
        """Everything to tell the user at start-up: refused files first, then unreadable and cut ones."""
        return (*(r.message for r in self.refused), *self.problems, *self.warnings)

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
    """(path, scope) of every candidate file, in prompt order: personal, root ... nearest.

    Candidates are directory entries named ``AGENTS.md`` of any kind (a dangling or looping link, a FIFO):
    deciding what may be read is :func:`read_unasked`'s job, so that each refusal is reported.
    """
    cwd = cwd.resolve()
    root = repository_root(cwd)
    chain = [cwd]
    if root is not None:
        chain = [folder for folder in (cwd, *cwd.parents) if folder == root or root in folder.parents]
    found: list[tuple[Path, str]] = []
    personal = config_dir / FILE_NAME
    if os.path.lexists(personal):
        found.append((personal, "Personal instructions"))
    for folder in reversed(chain):
        path = folder / FILE_NAME
        # os.path.realpath does not raise on a symlink loop (Path.resolve does, on this Python).
        if os.path.lexists(path) and os.path.realpath(path) != os.path.realpath(personal):
            found.append((path, "Project instructions" if folder == (root or cwd) else "Directory instructions"))
    return found


def load_instructions(
    cwd: Path,
    config_dir: Path,
    max_chars: int,
    *,
    policy: PathPolicy | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> Instructions:
    """Read the instruction files for a session in ``cwd`` (see the module docstring).

    ``policy`` is the session's path policy (its protected files and ``path_deny`` apply); by default one
    rooted at the repository. Project and directory files must lead into the repository (or ``cwd`` when
    there is none); the personal file may lead anywhere the policy does not deny.
    """
    cwd = cwd.resolve()
    top = repository_root(cwd) or cwd
    policy = policy or PathPolicy(roots=[top])
    texts: list[tuple[Path, str, str]] = []
    problems: list[str] = []
    refused: list[RefusedFile] = []
    for path, scope in instruction_paths(cwd, config_dir):
        within = () if scope == "Personal instructions" else (top,)
        got = read_unasked(path, policy, within=within, max_bytes=max_bytes)
        if not isinstance(got, UnaskedRefusal):
            texts.append((path, scope, got.text))
        elif got.guarded:
            refused.append(RefusedFile(path, scope, got.reason))
        else:
            problems.append(f"Cannot read instructions {path}: {got.reason}; it is ignored.")
    found = _capped(texts, max_chars, problems)
    return Instructions(found.files, found.warnings, found.problems, found.chars, tuple(refused))


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
