"""What the sandbox will do to a command before it runs: the writes it will refuse or throw away, the hosts it
will not let it reach. For the words put to a person ("y runs it in the sandbox: its write to ~/x will fail").

Contract:
    :func:`foresee` reads the command line (the shell parser of ``safety/``: redirections, the operands of the
    programs that write, the hosts of the programs that connect) against a :class:`~swebash_ai.sandbox.policy.
    SandboxPolicy` and returns one phrase per consequence, in the command's order, each path as the command
    wrote it. It runs nothing and reads nothing but the policy. It says only what it can tell from the words:
    an empty list is no promise that the command will run as in a terminal (a script writes where it likes),
    and every phrase is one the walls make true.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from swebash_ai.sandbox.policy import SandboxPolicy
from swebash_ai.sandbox.view import within

__all__ = ["foresee", "private_tmp_writes"]

_WRITERS = frozenset({"touch", "mkdir", "rm", "rmdir", "tee", "truncate", "chmod", "chown", "unlink", "shred"})
_SKIP_FIRST = frozenset({"chmod", "chown"})
_COPIERS = frozenset({"cp", "mv", "ln", "install"})
_HTTP = frozenset({"curl", "wget", "http", "https", "pip", "pip3", "uv", "npm", "yarn", "pnpm", "cargo", "go", "gem",
                   "git"})
_SSH = frozenset({"ssh", "scp", "sftp", "rsync", "nc", "ncat", "telnet", "ftp"})
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://(?:[^@/]*@)?(\[[^]]+\]|[^/:?#]+)", re.IGNORECASE)
_SCP = re.compile(r"^(?:[^@/\s]+@)?([A-Za-z0-9][A-Za-z0-9.-]*):")
_GIT_REMOTE = frozenset({"clone", "fetch", "pull", "push", "ls-remote", "submodule"})
_INSTALLS = frozenset({"install", "add", "download", "update", "upgrade", "sync", "fetch", "get", "i", "ci"})
MOST = 4
"""Most consequences named (a command that writes twenty paths outside says so of the first ones)."""


def _argv_writes(argv: list[str]) -> list[str]:
    name = os.path.basename(argv[0]) if argv else ""
    if name in _COPIERS:
        from swebash_ai.safety.persistence import written_words

        return written_words(argv) or []
    if name not in _WRITERS:
        return []
    operands = [a for a in argv[1:] if not a.startswith("-")]
    return operands[1:] if name in _SKIP_FIRST else operands


def _hosts(argv: list[str]) -> tuple[list[str], bool]:
    """(hosts named, whether the program uses the network at all) of one simple command."""
    name = os.path.basename(argv[0]) if argv else ""
    args = argv[1:]
    hosts = [m.group(1) for a in args if (m := _URL.match(a))]
    if name in _SSH:
        hosts += [m.group(1) for a in args if (m := _SCP.match(a)) and not a.startswith("-")]
        if name == "ssh" and not hosts:
            hosts += [a.rpartition("@")[2] for a in args if not a.startswith("-")][:1]
        return hosts, True
    if name == "git":
        hosts += [m.group(1) for a in args if (m := _SCP.match(a)) and "/" not in a.partition(":")[0]]
        return hosts, bool(set(args) & _GIT_REMOTE)
    if name in ("curl", "wget"):
        return hosts, True
    return hosts, name in _HTTP and bool(set(args) & _INSTALLS)


def _absolute(word: str, cwd: str, home: Path) -> str | None:
    if word == "~" or word.startswith("~/"):
        word = str(home) + word[1:]
    for ref in ("$HOME", "${HOME}"):
        if word == ref or word.startswith(ref + "/"):
            word = str(home) + word[len(ref):]
    if "$" in word or "`" in word or any(c in word for c in "*?["):
        return None
    return os.path.normpath(os.path.join(cwd, word))


def _write_fate(path: str, policy: SandboxPolicy, backend: str) -> str | None:
    """What becomes of a write to ``path`` (absolute, normalised), or ``None``: it lands, and stays."""
    kept = [*policy.read_only, *policy.sealed]
    if any(within(path, w) for w in policy.writable):
        return "will fail: git or swebash-ai runs code from there, so the sandbox keeps it read-only" if any(
            within(path, p) for p in kept) else None
    for s in policy.view or ():
        if within(path, s.path) and s.mode in ("rw", "cache"):
            return None if s.mode == "rw" else "goes to a cache whose writes are thrown away when it ends"
    home = policy.empty_home
    if home is not None and within(path, home):  # bubblewrap remounts it read-only: a write fails, loudly
        return "will fail: the sandbox shows your home folder read-only (its toolchains alone)"
    if policy.private_tmp and within(path, "/tmp"):  # noqa: S108 - the sandbox's own /tmp, named
        # bubblewrap's /tmp is a fresh tmpfs; Landlock and Seatbelt give a fresh folder in TMPDIR instead
        return _TMP_FATE if backend == "bwrap" else "will fail: only the fresh folder in $TMPDIR is writable there"
    return "will fail: outside the workspace the sandbox is read-only"


def _allowed(host: str, policy: SandboxPolicy) -> bool:
    for entry in policy.allow_hosts:
        name = entry.strip().lower().partition(":")[0]
        if host.lower() == name or (name.startswith("*.") and host.lower().endswith(name[1:])):
            return True
    return False


_TMP_FATE = "lands in the sandbox's own /tmp and is gone when it ends"


def _fates(parsed: Any, cwd: str, policy: SandboxPolicy, backend: str) -> list[tuple[str, str]]:
    """(word, what becomes of the write) of each path the parsed command writes that does not simply land."""
    words = [w.text for w, mode in parsed.file_targets if mode == "write"]
    for simple in parsed.commands:
        words += _argv_writes(simple.argv)
    out = []
    for word in dict.fromkeys(words):
        path = _absolute(word, cwd, policy.home)
        fate = None if path is None else _write_fate(path, policy, backend)
        if fate is not None:
            out.append((word, fate))
    return out


def foresee(command: str, cwd: str, policy: SandboxPolicy, *, backend: str = "bwrap",
            asks_hosts: bool = False) -> list[str]:
    """Phrases for what the sandbox does to ``command`` (see the module docstring) under ``backend``;
    ``asks_hosts``: a host the allow list does not name is put to a person when the command connects."""
    from swebash_ai.safety.shell_parse import parse

    parsed = parse(command)
    if parsed is None:
        return []
    said = [f"its write to {word} {fate}" for word, fate in _fates(parsed, cwd, policy, backend)]
    if policy.network != "full":
        for simple in parsed.commands:
            hosts, networked = _hosts(simple.argv)
            name = os.path.basename(simple.argv[0]) if simple.argv else ""
            for host in dict.fromkeys(hosts):
                if name in _SSH or (name == "git" and not any(_URL.match(a) for a in simple.argv)):
                    said.append(f"its connection to {host} will fail: only HTTP(S) leaves the sandbox")
                elif not _allowed(host, policy):
                    fate = "is put to you first" if asks_hosts else "will fail"
                    said.append(f"its connection to {host} {fate} (sandbox_allow_hosts does not list it)")
            if networked and not hosts:
                said.append(f"{name} reaches only the hosts of sandbox_allow_hosts" +
                            (" and those you allow when asked" if asks_hosts else ""))
    said = list(dict.fromkeys(said))
    return said[:MOST] + ([f"and {len(said) - MOST} more"] if len(said) > MOST else [])


def private_tmp_writes(command: str, cwd: str, policy: SandboxPolicy) -> list[str]:
    """The paths ``command`` writes that can only land in bubblewrap's private ``/tmp`` (``/tmp/x``, ``$TMPDIR``
    is not read), as the command wrote them."""
    from swebash_ai.safety.shell_parse import parse

    parsed = parse(command)
    return [] if parsed is None else [word for word, fate in _fates(parsed, cwd, policy, "bwrap") if fate == _TMP_FATE]
