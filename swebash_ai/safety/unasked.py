"""Files the app reads on its own: the one door for "read a file nobody named in a tool call".

Contract:
    :func:`read_unasked` reads one text file through the same guard as the ``read_file`` tool and returns
    either :class:`UnaskedText` or :class:`UnaskedRefusal` (with a reason written for a person);
    :func:`read_unasked_bytes` does every check but the text ones for a binary file (an ``@shot.png``). It never
    raises for anything about the file. Every file the app puts in front of the model by itself goes
    through it: the personal, project and nested ``AGENTS.md`` today, and custom command files, project
    rules and hooks, and ``@file`` attachments as they come. Do not open such a file any other way.

Why:
    A repository decides what its files are. Git stores symbolic links, absolute targets included, so a
    cloned ``AGENTS.md`` can be a link to ``~/.ssh/id_rsa``; a hard link looks like an ordinary file; a FIFO
    blocks a plain ``open`` forever; a 50 MB file is not instructions. A tool call at least shows the user
    what is read; these reads happen before any question, so they get every check and never an ``ask``:

    * the :class:`~swebash_ai.safety.paths.PathPolicy` verdict on the path as written and on the resolved
      path (``deny`` refuses: credentials, keys, ``/proc``, the app's own config, a symlink loop...); its
      ``ask`` (outside the workspace) is no obstacle here, where a file may lie is ``within``;
    * ``within``: folders the resolved file must stay inside (a file a repository ships must lead into
      that repository, not to ``~/.bashrc``);
    * :func:`~swebash_ai.safety.paths.open_for_read`: ``O_NOFOLLOW|O_NONBLOCK``, regular files only, the
      descriptor re-checked after the open (its real path, and its (device, inode) against the protected
      files, for a hard link renamed into place after the check);
    * whole or nothing: a file over ``max_bytes`` is refused, never cut (a cut at an arbitrary byte can
      turn instructions into something else); text must be UTF-8 without NUL bytes;
    * secrets by content (:mod:`swebash_ai.safety.secrets`): a file that is a private key is refused, tokens
      and keys in credential formats are masked, as in every tool result.

This module is pure: standard library, the path policy and the secrets scan, no configuration import.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from swebash_ai.safety.paths import PathPolicy, PathRefused, open_for_read

__all__ = ["DEFAULT_MAX_BYTES", "UnaskedBytes", "UnaskedRefusal", "UnaskedText", "read_unasked", "read_unasked_bytes"]

DEFAULT_MAX_BYTES = 1_048_576
"""The same default as the ``fs_max_size`` setting; callers pass the setting's value."""


@dataclass(frozen=True)
class UnaskedText:
    """The file's whole text. ``path`` as asked; ``resolved`` is the file that was read."""

    path: Path
    resolved: Path
    text: str


@dataclass(frozen=True)
class UnaskedBytes:
    """The file's whole content, for a binary file (an image). ``resolved`` is the file that was read."""

    path: Path
    resolved: Path
    data: bytes


@dataclass(frozen=True)
class UnaskedRefusal:
    """A file left out, and why (one line, for the user: it may name where a link leads).

    ``guarded`` is True when the guard refused it (a protected file, outside ``within``, not a regular
    file, too large, changed under the check) and False when it merely could not be read (missing, no
    permission, not UTF-8 text).
    """

    path: Path
    reason: str
    guarded: bool = True


def read_unasked(
    path: Path,
    policy: PathPolicy,
    *,
    within: Sequence[Path] = (),
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> UnaskedText | UnaskedRefusal:
    """Read a file the app reads by itself (no tool call names it), guarded like ``read_file``.

    For every such file: ``AGENTS.md`` (personal, project, nested), custom command files, project rules
    and hooks, ``@file`` attachments. See the module docstring for what is checked and why.

    Args:
        path: The file, absolute (a relative one is taken from the policy's first root).
        policy: The session's path policy (its protected files and ``path_deny`` apply).
        within: Folders the resolved file must lie in; empty: anywhere the policy does not deny (for the
            user's own files, such as the personal ``AGENTS.md``).
        max_bytes: Largest file read (``fs_max_size``); a larger one is refused whole.
    """
    got = _guarded_bytes(path, policy, within, max_bytes)
    if isinstance(got, UnaskedRefusal):
        return got
    resolved, data = got
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError:
        return UnaskedRefusal(path, "not UTF-8 text", guarded=False)
    if "\x00" in decoded:
        return UnaskedRefusal(path, "it is binary (NUL bytes), not text", guarded=False)
    # What a tool returns is scanned for secrets; so is what the app puts in front of the model by itself.
    from swebash_ai.safety.secrets import is_key_file, mask_secrets  # loaded with the first file found

    if is_key_file(decoded):
        return UnaskedRefusal(path, "it holds a private key")
    return UnaskedText(path, resolved, mask_secrets(decoded).text)


def read_unasked_bytes(
    path: Path,
    policy: PathPolicy,
    *,
    within: Sequence[Path] = (),
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> UnaskedBytes | UnaskedRefusal:
    """Read a binary file the app reads by itself (an ``@shot.png`` image): every check of
    :func:`read_unasked` about where the file is and what it is, the same whole-or-nothing size limit; no
    text decoding and no secrets scan (the caller decides what the bytes are: an image by its magic numbers)."""
    got = _guarded_bytes(path, policy, within, max_bytes, text_file=False)
    if isinstance(got, UnaskedRefusal):
        return got
    return UnaskedBytes(path, got[0], got[1])


def _guarded_bytes(
    path: Path, policy: PathPolicy, within: Sequence[Path], max_bytes: int, *, text_file: bool = True
) -> tuple[Path, bytes] | UnaskedRefusal:
    """The checks shared by both reads (see the module docstring): (the file read, its whole content)."""
    text = str(path)
    verdict = policy.check(text, "read")
    if verdict.decision == "deny":
        return UnaskedRefusal(path, _joined(verdict.reasons) + _leads_to(policy, text))
    try:
        resolved = policy.resolve(text)
    except PathRefused as exc:
        return UnaskedRefusal(path, str(exc))
    if resolved != Path(os.path.abspath(text)):
        # Judge the resolved file itself too: a link swapped between the check and the resolution.
        again = policy.check(str(resolved), "read")
        if again.decision == "deny":
            return UnaskedRefusal(path, f"{_joined(again.reasons)}; it leads to {resolved}")
    folders = [Path(os.path.realpath(f)) for f in within]
    if folders and not any(resolved.is_relative_to(f) for f in folders):
        where = ", ".join(str(f) for f in folders)
        return UnaskedRefusal(path, f"it leads to {resolved}, outside {where}")
    if os.path.isdir(resolved):  # harmless and common enough (a folder named so): unreadable, not refused
        return UnaskedRefusal(path, "it is a directory", guarded=False)
    try:
        data, truncated = open_for_read(resolved, max_bytes, refuse=policy.descriptor_reason)
    except PathRefused as exc:
        return UnaskedRefusal(path, str(exc).removeprefix(f"refusing to read {resolved}: "))
    except OSError as exc:
        return _os_refusal(path, resolved, exc)
    if truncated:
        setting = " (fs_max_size)" if text_file else ""
        return UnaskedRefusal(path, f"it is larger than {_human(max_bytes)}{setting}; such a file is "
                                    "read whole or not at all")
    return resolved, data


def _joined(reasons: Sequence[str]) -> str:
    return "; ".join(reasons) or "refused by the path policy"


def _leads_to(policy: PathPolicy, text: str) -> str:
    """Where a refused link leads, for the user's notice (the model never sees it)."""
    try:
        resolved = policy.resolve(text)
    except PathRefused:
        return ""
    return "" if resolved == Path(os.path.abspath(text)) else f"; it leads to {resolved}"


def _os_refusal(path: Path, resolved: Path, exc: OSError) -> UnaskedRefusal:
    if exc.errno == errno.ELOOP:  # O_NOFOLLOW met a symlink that was not there at the check
        return UnaskedRefusal(path, f"{resolved} became a symbolic link between the check and the open")
    if isinstance(exc, FileNotFoundError):
        same = resolved == Path(os.path.abspath(path))
        where = "it does not exist" if same else f"it leads to {resolved}, which does not exist"
        return UnaskedRefusal(path, where, guarded=False)
    return UnaskedRefusal(path, exc.strerror or str(exc), guarded=False)


def _human(n: int) -> str:
    if n >= 1 << 20:
        return f"{n / (1 << 20):.1f} MiB"
    if n >= 1 << 10:
        return f"{n / (1 << 10):.0f} KiB"
    return f"{n} bytes"
