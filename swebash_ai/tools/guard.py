"""The path guard the filesystem tools share: the context's path policy, the one denial text, and
:class:`PolicyGate`, the policy applied cheaply to every entry of a directory walk (``list_dir``, ``search``,
``find_files``), and :func:`subfolders`, how a walk descends.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol, cast

from swebash_ai.safety.paths import PathPolicy, PathRefused
from swebash_ai.safety.verdict import Verdict
from swebash_ai.tools.registry import ToolContext

__all__ = ["DIR_FLAGS", "PolicyGate", "denial_message", "path_check", "path_policy_of", "path_session_key",
           "subfolders"]

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
"""A folder of a walk is opened relative to its parent's descriptor, never through a symlink."""


class _WalkOutcome(Protocol):
    stopped: str
    unreadable: int


def subfolders(dir_fd: int, found: Iterable[tuple[str, str, str]], out: _WalkOutcome) -> Iterator[tuple[int, str, str]]:
    """The folders a walk descends into, ``(name, absolute path, relative path)`` below ``dir_fd``: each opened
    with :data:`DIR_FLAGS` (a folder swapped for a symlink leads nowhere) and closed after its turn. Stops when
    ``out.stopped`` is set; a folder that cannot be opened counts in ``out.unreadable``."""
    for name, abs_path, rel in found:
        if out.stopped:
            return
        try:
            sub = os.open(name, DIR_FLAGS, dir_fd=dir_fd)
        except OSError:
            out.unreadable += 1
            continue
        try:
            yield sub, abs_path, rel
        finally:
            os.close(sub)


def path_policy_of(ctx: ToolContext) -> PathPolicy:
    """The context's path policy, or a default one built from the settings (workspace = ``ctx.cwd``)."""
    if ctx.path_policy is not None:
        return cast(PathPolicy, ctx.path_policy)
    roots = list(ctx.settings.workspace_roots) or [str(ctx.cwd)]
    return PathPolicy(roots=roots, extra_deny=list(ctx.settings.path_deny))


def path_check(op: str) -> Callable[[ToolContext, Any], Verdict]:
    """A tool's policy: the path policy's verdict on its ``path`` argument for ``op`` (read, list...)."""

    def policy(ctx: ToolContext, args: Any) -> Verdict:
        return path_policy_of(ctx).check(args.path, op, str(ctx.cwd))

    return policy


def path_session_key(prefix: str) -> Callable[[ToolContext, Any], str | None]:
    """What "allow for this session" remembers for a path tool: the resolved path (``None``: unresolvable,
    so nothing is remembered)."""

    def key(ctx: ToolContext, args: Any) -> str | None:
        try:
            return f"{prefix}:{path_policy_of(ctx).resolve(args.path, str(ctx.cwd))}"
        except PathRefused:
            return None

    return key


def denial_message(path: str, verdict: Verdict) -> str:
    """The one denial text for a path: identical whether or not the path exists (no oracle)."""
    reasons = "; ".join(verdict.reasons) or "blocked by policy"
    return f"Access to '{path}' is not allowed: {reasons}. Do not retry; ask the user if you need it."


class _Name:
    """A cheap stand-in for ``Path(name)``; ``PolicyGate`` uses it only if it answers like the real one."""

    __slots__ = ("name", "parts")

    def __init__(self, name: str) -> None:
        self.name = name
        self.parts = (name,)


_PROBES = (".env", ".env.example", "id_rsa", "id_rsa.pub", "server.key", ".bash_history", "main.py", "x")


class PolicyGate:
    """The path policy applied cheaply to every entry of a walk (here and in ``fs.list_dir``).

    ``PathPolicy.denied_reason`` compares a path with every protected base path (~0.3 ms a call): too
    slow for 20,000 files. A path can only fall under a protected base (``~/.ssh``...) if its directory
    is that base's ancestor, and walks start from a root the policy allowed; so outside the few
    ancestor directories only the name rules and ``path_deny`` globs can apply. Those are judged by a
    copy of the policy without base paths: the same code, minus the per-base comparisons.
    """

    def __init__(self, policy: PathPolicy) -> None:
        self.policy = policy
        self.ancestors: set[str] | None = None
        self.names_only = policy
        self.fast_names = False
        bases = getattr(policy, "deny_paths", None)
        if isinstance(bases, list):
            self.ancestors = {str(parent).lower() for base, _r in bases for parent in Path(base).parents}
            self.names_only = copy.copy(policy)
            self.names_only.deny_paths = []
            self.fast_names = all(self._by_name(n) == self._by_path(n) for n in _PROBES)

    def _by_path(self, name: str) -> bool:
        return self.names_only.denied_reason(Path(name)) is not None

    def _by_name(self, name: str) -> bool | None:
        """The stand-in check; ``None`` if the policy needs more than ``name`` and ``parts``."""
        try:
            return self.names_only.denied_reason(cast(Path, _Name(name))) is not None
        except (AttributeError, TypeError):
            return None

    def full_check_below(self, dir_abs: str) -> bool:
        """Entries of this directory need the full policy (it lies above a protected path)."""
        return self.ancestors is None or dir_abs.lower() in self.ancestors

    def denied(self, abs_path: str, name: str, full: bool) -> bool:
        """Is the entry ``name`` (at ``abs_path``) protected? ``full``: from ``full_check_below``."""
        if full:
            return self.policy.denied_reason(Path(abs_path)) is not None
        if self.fast_names:
            quick = self._by_name(name)
            if quick is not None:
                return quick
        return self._by_path(name)

    def read_denied(self, abs_path: str) -> bool:
        """The complete check, hard links included (for symlink targets and multiply-linked files)."""
        return self.policy.check(abs_path, "read", None).decision == "deny"
