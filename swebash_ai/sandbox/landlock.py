"""The Landlock backend, for Linux without user namespaces: the policy as Landlock rules, applied by a launcher.

Contract:
    :func:`render` (pure) gives ``python -I -S landlock.py SPEC -- ARGV``: this file, run as a script, builds a
    ruleset from SPEC (JSON), forks, and in the child restricts itself (``no_new_privs`` + ``landlock_restrict_self``)
    and executes ARGV; the parent waits, removes the run's private temporary folder and exits with the
    command's status. :func:`abi` says which Landlock version the kernel has (0: none). Standard library only:
    it runs as a script with ``-I -S``.

Why our own ctypes layer and not PyPI's ``landlock`` (1.0.0.dev5, alpha): that binding covers filesystem rules
only (no ``handled_access_net``, no ``scoped``), asks for every right whatever the kernel's ABI, and this file
must run as a stand-alone script without site-packages; the three system calls take sixty lines.

What Landlock can and cannot do here (``LIMITS``, printed by ``swebash-ai sandbox --show``): it grants by folder
tree and cannot take a path back out of a granted tree, so hidden paths outside the workspace are left out of the
read grants (their names can still be listed, their contents not read), but inside the writable workspace
``.git/config``, ``.git/hooks``, ``.swebash-ai/`` and ``.env`` files are NOT protected; there is no private
``/tmp`` (a fresh folder in TMPDIR instead); network: TCP connect and bind are refused (ABI 4+), and a seccomp
filter refuses every other internet socket (UDP: DNS to any server would carry data out as names) and every unix
socket (Landlock does not govern ``connect()`` to a named one: a session bus or a Docker socket would run things
outside the sandbox; ``socketpair`` is left).
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from swebash_ai.sandbox.policy import SandboxPolicy

__all__ = ["LIMITS", "MIN_ABI", "SHORT_OF_BWRAP", "abi", "not_dumpable", "read_grants", "render"]

LIMITS = (
    "landlock: inside the workspace .git/config, .git/hooks, .swebash-ai/ and .env files are not protected "
    "(Landlock grants by folder tree)",
    "landlock: hidden folders outside the workspace keep their names visible (their contents cannot be read); "
    "paths outside the view are refused, not absent; caches of home are read-only (no overlay)",
    "landlock: no pid namespace: host processes are listed (swebash-ai is non-dumpable and a root command keeps no "
    "capability, so their environment and memory are refused)",
    "landlock: no private /tmp (a fresh folder in TMPDIR instead); TCP is closed by Landlock, UDP and unix "
    "sockets by seccomp (x86_64 and aarch64 only; programs that talk to a local daemon fail), 32-bit programs "
    "cannot run",
    "landlock: no proxy: sandbox_allow_hosts is reachable under bubblewrap only",
)
SHORT_OF_BWRAP = (
    "inside the workspace .git/config, hooks and .env are not protected (only put back after each command), paths "
    "outside the view are refused rather than absent, caches are read-only, no private /tmp, no pid namespace (host "
    "processes are listed, their memory and environment refused), no proxy for sandbox_allow_hosts"
)
"""One line for ``doctor``: what a user without user namespaces does not get."""
MIN_ABI = 4  # TCP connect rules: below it the network cannot be closed
_SYS_CREATE, _SYS_ADD, _SYS_RESTRICT = 444, 445, 446  # the same number on every architecture
_PR_SET_NO_NEW_PRIVS = 38
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1, 2, 4, 8
_READ = _EXECUTE | _READ_FILE | _READ_DIR


def _all_fs(version: int) -> int:
    return (1 << 13) - 1 | (1 << 13 if version >= 2 else 0) | (1 << 14 if version >= 3 else 0) | (
        1 << 15 if version >= 5 else 0)


def _file_rights(version: int) -> int:
    """The rights a rule on a file (not a folder) may hold."""
    rights = _EXECUTE | _WRITE_FILE | _READ_FILE
    return rights | (1 << 14 if version >= 3 else 0) | (1 << 15 if version >= 5 else 0)


def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def abi() -> int:
    """The kernel's Landlock ABI version, 0 when Landlock is absent or off."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        version = int(_libc().syscall(_SYS_CREATE, None, 0, 1))
    except (OSError, AttributeError):
        return 0
    return max(version, 0)


def read_grants(hidden: Sequence[str], listdir: Any = os.listdir,
                tops: Sequence[str] = ("/",)) -> list[tuple[str, bool]]:
    """Where reading is granted so that ``hidden`` is left out: ``(path, whole)`` pairs, ``whole`` False for a
    folder on the way to a hidden path (only listing it is granted). ``tops``: the folders shown (the view);
    nothing outside them is granted. Pure but for ``listdir``."""
    hide = {os.path.normpath(h) for h in hidden}
    out: list[tuple[str, bool]] = []
    for top in tops:
        top = os.path.normpath(top)
        inside = {h for h in hide if Path(h).is_relative_to(top) and h != top}
        if top in hide:
            continue
        if not inside:
            out.append((top, True))
        else:
            out += _grants_in(top, inside, listdir)
    return out


def _grants_in(top: str, hide: set[str], listdir: Any) -> list[tuple[str, bool]]:
    on_way = {str(p) for h in hide for p in Path(h).parents}
    out: list[tuple[str, bool]] = []

    def visit(folder: str) -> None:
        out.append((folder, False))
        try:
            names = sorted(listdir(folder))
        except OSError:
            return
        for name in names:
            path = os.path.join(folder, name)
            if path in hide:
                continue
            if path in on_way and not os.path.islink(path):
                visit(path)
            else:
                out.append((path, True))

    visit(top)
    return out


def render(policy: SandboxPolicy, argv: Sequence[str]) -> list[str]:
    """The argv that runs ``argv`` under ``policy`` through this file as a launcher."""
    view = policy.view
    ws = tuple(str(w) for w in (*policy.writable, *(v.path for v in view or () if v.mode == "rw")))
    hidden = [str(h.path) for h in policy.hidden if not any(h.path.is_relative_to(w) for w in policy.writable)]
    # No overlay here: a cache folder is shown read-only (a build that writes there fails and says so).
    read = ["/"] if view is None else [*(str(v.path) for v in view if v.mode != "rw"), "/proc", "/dev"]
    spec = {"writable": ws, "read": read, "hidden": hidden, "network": policy.network,
            "private_tmp": policy.private_tmp}
    return [sys.executable, "-I", "-S", str(Path(__file__)), json.dumps(spec), "--", *argv]


class _RulesetAttr(ctypes.Structure):
    _fields_ = (("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64))


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed", ctypes.c_uint64), ("fd", ctypes.c_int32))


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"landlock {what}: {os.strerror(err)}")
    return result


def _add(libc: Any, ruleset: int, path: str, rights: int, version: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # gone meanwhile, or unreadable to us too
    try:
        if not os.path.isdir(path):
            rights &= _file_rights(version)
        if rights:
            rule = _PathBeneath(rights, fd)
            _check(libc.syscall(_SYS_ADD, ruleset, 1, ctypes.byref(rule), 0), f"rule on {path}")
    finally:
        os.close(fd)


# seccomp: a socket other than TCP (UDP: DNS to any server, so data out as names) is refused. Per architecture:
# (audit arch, socket syscall number, x32 bit or 0).
_SECCOMP_ARCH = {"x86_64": (0xC000003E, 41, 0x40000000), "aarch64": (0xC00000B7, 198, 0)}
_AF_UNIX, _AF_INET, _AF_INET6, _SOCK_STREAM, _EACCES = 1, 2, 10, 1, 13


def udp_filter(machine: str) -> list[tuple[int, int, int, int]] | None:
    """The classic-BPF seccomp program, as ``(code, jt, jf, k)``, that refuses ``socket(AF_INET[6], not
    SOCK_STREAM)`` with EACCES (Landlock covers TCP), ``socket(AF_UNIX)`` (Landlock does not govern
    ``connect()`` to a named socket: the session bus, ``systemd-run --user``, the Docker socket would run things
    outside; ``socketpair`` stays), and every system call of another ABI (x32, i386 on x86_64: another socket
    number); ``None`` on an architecture it does not know."""
    if machine not in _SECCOMP_ARCH:
        return None
    arch, nr_socket, x32 = _SECCOMP_ARCH[machine]
    ld, jeq, jge, and_, ret = 0x20, 0x15, 0x35, 0x54, 0x06
    allow, deny = 0x7FFF0000, 0x00050000 | _EACCES
    prog = [(ld, 0, 0, 4), (jeq, 1, 0, arch), (ret, 0, 0, deny), (ld, 0, 0, 0)]
    if x32:
        prog += [(jge, 0, 1, x32), (ret, 0, 0, deny)]
    prog += [(jeq, 0, 8, nr_socket), (ld, 0, 0, 16), (jeq, 5, 0, _AF_UNIX), (jeq, 1, 0, _AF_INET),
             (jeq, 0, 4, _AF_INET6), (ld, 0, 0, 24), (and_, 0, 0, 0xF), (jeq, 1, 0, _SOCK_STREAM), (ret, 0, 0, deny),
             (ret, 0, 0, allow)]
    return prog


class _SockFilter(ctypes.Structure):
    _fields_ = (("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32))


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter)))


def _refuse_udp(libc: Any) -> None:
    prog = udp_filter(os.uname().machine)
    if prog is None:
        raise OSError(f"no seccomp filter for {os.uname().machine}: UDP could not be closed")
    filters = (_SockFilter * len(prog))(*[_SockFilter(*i) for i in prog])
    fprog = _SockFprog(len(prog), filters)
    _check(libc.prctl(22, 2, ctypes.byref(fprog), 0, 0), "seccomp")  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER


class _CapHeader(ctypes.Structure):
    _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))


class _CapData(ctypes.Structure):
    _fields_ = (("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32))


def _drop_capabilities(libc: Any) -> None:
    """Run by root, the command keeps no capability: CAP_SYS_PTRACE would read the host process's memory and
    environment (``/proc/PID/environ``) whatever its dumpable flag, CAP_SYS_ADMIN would mount. Nothing to do for
    another user."""
    if os.geteuid() != 0:
        return
    for cap in range(64):  # PR_CAPBSET_DROP: not even an exec of a set-uid program gets them back
        if libc.prctl(24, cap, 0, 0, 0) < 0:
            break
    data = (_CapData * 2)()
    _check(libc.capset(ctypes.byref(_CapHeader(0x20080522, 0)), data), "capset")


def not_dumpable() -> None:
    """Mark this (the host's) process non-dumpable: another process of the same user, a command under Landlock
    among them, can then not read its ``/proc/PID/environ`` or memory (the API key is in both). Linux only."""
    if sys.platform.startswith("linux"):
        _libc().prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE


def apply(spec: dict[str, Any], tmp: str | None) -> None:
    """Restrict this process (and what it starts) to ``spec``. Raises OSError when the kernel refuses."""
    version = abi()
    if version < 1:
        raise OSError("Landlock is not available in this kernel")
    libc = _libc()
    closed_net = spec["network"] != "full"
    if closed_net and version < MIN_ABI:
        raise OSError(f"Landlock ABI {version} cannot close the network (needs {MIN_ABI})")
    attr = _RulesetAttr(_all_fs(version), 3 if closed_net else 0, 3 if version >= 6 else 0)
    size = 24 if version >= 6 else 16 if closed_net else 8
    ruleset = _check(libc.syscall(_SYS_CREATE, ctypes.byref(attr), size, 0), "ruleset")
    try:
        for path, whole in read_grants(spec["hidden"], tops=spec.get("read", ["/"])):
            _add(libc, ruleset, path, _READ if whole else _READ_DIR, version)
        for path in [*spec["writable"], *([tmp] if tmp else [])]:
            _add(libc, ruleset, path, _all_fs(version), version)
        for dev in ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty"):
            _add(libc, ruleset, dev, _READ | _WRITE_FILE, version)
        _drop_capabilities(libc)
        _check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        _check(libc.syscall(_SYS_RESTRICT, ruleset, 0), "restrict_self")
        if closed_net:
            _refuse_udp(libc)
    finally:
        os.close(ruleset)


def _main(args: list[str]) -> int:
    spec, argv = json.loads(args[0]), args[2:]
    tmp = tempfile.mkdtemp(prefix="swebash-ai-sandbox-") if spec.get("private_tmp") else None
    pid = os.fork()
    if pid == 0:
        try:
            if tmp:
                os.environ["TMPDIR"] = tmp
            apply(spec, tmp)
            os.execvp(argv[0], argv)  # noqa: S606 - the command this launcher exists to run
        except OSError as exc:
            os.write(2, f"swebash-ai sandbox (landlock): {exc}; the command was not run\n".encode())
        os._exit(126)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    if tmp:
        shutil.rmtree(tmp, ignore_errors=True)
    return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
