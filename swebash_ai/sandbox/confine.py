"""Confining one command: the policy from the settings, the argv for the chosen backend, and what it blocked.

Contract:
    :func:`policy_for` builds the :class:`~swebash_ai.sandbox.policy.SandboxPolicy` of a run from the path guard
    and the settings; :func:`wrap` turns a command's argv into the sandboxed argv, or raises :class:`ToolError`
    (title "Sandbox unavailable") naming what is missing: never the bare argv. :func:`blocked_note` reads a
    finished command's stderr for the marks of a refusal (a read-only file system, a permission denied, an
    unreachable network) and says that the sandbox did it.
"""

from __future__ import annotations

import dataclasses
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swebash_ai.errors import ToolError
from swebash_ai.sandbox import detect
from swebash_ai.sandbox.policy import SandboxPolicy, build_policy

if TYPE_CHECKING:
    from swebash_ai.config.settings import Settings
    from swebash_ai.safety.paths import PathPolicy

__all__ = ["UNAVAILABLE_TITLE", "Refusal", "backend_setting", "blocked_note", "policy_for", "refusals", "refused_line",
           "unasked_mode_problem", "with_proxy", "wrap"]

UNAVAILABLE_TITLE = "Sandbox unavailable"


def backend_setting(settings: Settings) -> str:
    """The backend asked for: ``sandbox_backend``, or ``bwrap`` when the old ``exec_sandbox = "bwrap"`` is set."""
    if settings.sandbox_backend == "auto" and settings.exec_sandbox == "bwrap":
        return "bwrap"
    return settings.sandbox_backend


def unasked_mode_problem(settings: Settings) -> str | None:
    """Why a mode that runs commands unasked (auto) cannot be used here, or ``None``: it needs the sandbox."""
    if settings.exec_sandbox == "none":
        return "auto mode runs commands unasked only inside the sandbox, and exec_sandbox is none"
    choice = detect.choose(backend_setting(settings))
    if choice.backend is None:
        return (f"auto mode runs commands unasked only inside the sandbox, and no sandbox works here: "
                f"{choice.problem}")
    return None


def policy_for(paths: PathPolicy, settings: Settings, read_only_files: Sequence[Path] = ()) -> SandboxPolicy:
    """The policy of a command run under ``paths`` (the session's guard) with ``settings``."""
    from swebash_ai.storage.locations import locations

    where = locations()
    return build_policy(paths, own_dirs=(where.config_dir, where.data_dir, where.state_dir),
                        read_only_files=read_only_files, allow_hosts=settings.sandbox_allow_hosts,
                        network=settings.exec_sandbox_network, read=settings.sandbox_read,
                        write=settings.sandbox_write, env_pass=settings.sandbox_env_pass)


def with_proxy(policy: SandboxPolicy) -> SandboxPolicy:
    """``policy`` with the shared proxy's socket when it lists hosts and the network is otherwise closed."""
    if not policy.allow_hosts or policy.network != "none" or policy.proxy is not None:
        return policy
    from swebash_ai.sandbox import proxy

    return dataclasses.replace(policy, proxy=proxy.shared(policy.allow_hosts).path)


def wrap(policy: SandboxPolicy, argv: Sequence[str], *, cwd: Path, backend: str = "auto") -> list[str]:
    """``argv`` confined by ``policy`` with the backend that works here.

    Raises:
        ToolError: no backend works (the message says what is missing and how to get it); the command must
            not run.
    """
    choice = detect.choose(backend)
    if choice.backend is None:
        raise ToolError(f"The command was not run: it must run in the sandbox, and no sandbox works here: "
                        f"{choice.problem}.", title=UNAVAILABLE_TITLE)
    if choice.backend == "bwrap":
        from swebash_ai.sandbox import bwrap

        return bwrap.render(with_proxy(policy), argv, cwd=cwd, bwrap=choice.binary)
    if choice.backend == "landlock":
        from swebash_ai.sandbox import landlock

        landlock.not_dumpable()  # no pid namespace here: the command could read our /proc/PID/environ
        return landlock.render(policy, argv)
    from swebash_ai.sandbox import seatbelt

    return seatbelt.render(policy, argv, tmpdir=Path(tempfile.mkdtemp(prefix="swebash-ai-sandbox-")))


_BLOCKED = (
    (re.compile(r"Read-only file system"), "a write outside the workspace (or to .git/config, .git/hooks, "
     ".swebash-ai/) was refused: only the workspace and /tmp are writable"),
    (re.compile(r"Network is unreachable|Could not resolve host|Temporary failure in name resolution|"
                r"Name or service not known|getaddrinfo failed|Connection refused|nodename nor servname"),
     "the network is closed: nothing outside the machine can be reached"),
    (re.compile(r"Permission denied|Operation not permitted"), "an access was refused (a protected path, or "
     "something outside the workspace)"),
)


def confine_server(paths: PathPolicy, settings: Settings, argv: Sequence[str], cwd: Path) -> list[str]:
    """A long-lived server's argv (an MCP server with ``sandbox = true``) in the sandbox of the session's unasked
    commands, its network through the proxy; refused when ``exec_sandbox`` is ``none``."""
    if settings.exec_sandbox == "none":
        raise ToolError("it must run in the sandbox, and exec_sandbox is none")
    # The server's own files (its program, the script it is given) are shown read-only, folder by folder: the
    # view holds nothing else of the disk outside the system and the workspace (never the home folder whole).
    own = [str(Path(a).parent) for a in argv if os.path.isabs(a) and os.path.isfile(a)]
    settings = settings.model_copy(update={"sandbox_read": [*settings.sandbox_read, *own]})
    return wrap(with_proxy(policy_for(paths, settings)), argv, cwd=cwd, backend=backend_setting(settings))


_ERROR = re.compile(r"(Read-only file system|Permission denied|Operation not permitted)")
_QUOTED = re.compile(r"['‘\"`]([^'’\"`]+)['’\"`]")
_HOST = re.compile(r"(?:resolve host(?:name)?:? |connect to (?:host |server )?)\(?([A-Za-z0-9][A-Za-z0-9.\-]*)")
_WRITES = ("creat", "touch", "writ", "remov", "lock", "mkdir", "renam", "mov", "link", "truncat", "delet", "unlink",
           "replac", "chmod", "sav", "install", "mak")
MOST_REFUSALS = 6
"""Most refusals named in a note (the first ones: a build that fails on a write fails on many)."""


@dataclasses.dataclass(frozen=True)
class Refusal:
    """One operation the output shows refused: ``write``, ``open`` or ``access`` of a path, or ``connect`` to a
    host; ``path`` as the output wrote it, made absolute against the command's folder."""

    operation: str
    path: str

    def words(self) -> str:
        return f"{self.operation} {self.path}"


def _path_of(segment: str) -> tuple[str, str] | None:
    """(the words before the path, the path) of ``cannot touch '/x'``, ``/x`` or ``could not lock file x``."""
    quoted = list(_QUOTED.finditer(segment))
    if quoted:
        return segment[:quoted[-1].start()], quoted[-1].group(1)
    head, _, last = segment.strip().rpartition(" ")
    return (head, last) if last else None


def refusals(text: str, cwd: str | None = None) -> list[Refusal]:
    """What a confined command's output shows refused, in order, each once: a write (a read-only file system,
    or a permission error on a verb that writes), an open or access (a permission error), a connection (a host
    that could not be resolved or reached). Paths are absolute when ``cwd`` is given."""
    found: list[Refusal] = []
    for line in text.splitlines():
        hit = _ERROR.search(line)
        if hit is not None:
            after = _QUOTED.match(line[hit.end():].lstrip(": "))  # Python: "[Errno 30] Read-only ...: '/x'"
            if after is not None:
                verb, path = line[:hit.start()], after.group(1)
            else:
                segment = line[:hit.start()].rstrip().removesuffix(":").rpartition(": ")[2]
                parts = _path_of(segment)
                if parts is None:
                    continue
                verb, path = parts
            path = path.strip()
            if not path or (" " in path and not path.startswith("/")) or path.startswith("[Errno") or "@" in path:
                continue
            if cwd is not None and not path.startswith("/"):
                path = os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))
            lowered = verb.lower()
            op = ("write" if hit.group(1) == "Read-only file system" or any(w in lowered for w in _WRITES) else
                  "open" if "open" in lowered else "read" if "read" in lowered else "access")
            refusal = Refusal(op, path)
        elif (host := _HOST.search(line)) is not None and _NETWORK.search(line):
            refusal = Refusal("connect", host.group(1).rstrip("."))
        else:
            continue
        if refusal not in found:
            found.append(refusal)
    return found


_NETWORK = _BLOCKED[1][0]


def refused_line(metadata: Mapping[str, Any]) -> str:
    """One line for a person from a command result's metadata: each operation and path the sandbox refused
    (``sandbox_refused``), or what the note says may have been blocked; "" when it blocked nothing."""
    note = metadata.get("sandbox_blocked")
    if not isinstance(note, str) or not note:
        return ""
    named = [f"{r.get('operation')} {r.get('path')}" for r in metadata.get("sandbox_refused") or ()
             if isinstance(r, dict)]
    if named:
        return "the sandbox refused: " + ", ".join(named)
    return "the sandbox " + note.split("; ", 1)[-1].removeprefix("it ")  # "may have been blocked: ..."


def blocked_note(stderr: str, backend: str, exit_code: int | None, cwd: str | None = None) -> str | None:
    """A note when a failed command's output shows a refusal the sandbox would cause, else ``None``: each
    operation and path refused, in full (:func:`refusals`), then why such things are refused."""
    if exit_code == 0 or not stderr:
        return None
    said = [why for pattern, why in _BLOCKED if pattern.search(stderr)]
    if not said:
        return None
    named = refusals(stderr, cwd)
    what = ""
    if named:
        more = len(named) - MOST_REFUSALS
        what = "refused: " + ", ".join(r.words() for r in named[:MOST_REFUSALS]) + (f" and {more} more" if more > 0
                                                                                    else "") + "; "
    return (f"the command ran in the sandbox ({backend}); {what}it may have been blocked: {'; '.join(said)}. "
            "`swebash-ai sandbox --show` prints what it allows")
