"""Path policy: may the assistant read, list, stat or write this path?

Contract:
    ``PathPolicy(...).check(path, op, cwd)`` and the module-level :func:`check` return a
    :class:`~swebash_ai.safety.verdict.Verdict` and never raise.  ``deny`` for refused syntax and for
    always-protected paths (credentials, keys, shell histories, ``/proc``, ``/sys``, ``/dev``, the
    application's own config ...), ``deny`` for writes into a ``.git`` directory, ``allow`` for reads
    inside a workspace root, ``ask`` for everything outside the roots and for every write.
    :func:`open_for_read` opens a checked, *resolved* path without following a swapped-in symlink and
    without blocking on FIFOs or devices.

Why:
    A model that can read files can send them to a provider. Paths are resolved the way the OS will
    resolve them (only a leading ``~`` is expanded; ``$VAR``, ``~user`` and URLs are refused rather than
    guessed), compared by components (``/x/ws2`` is not inside ``/x/ws``), and deny rules apply both to
    the path as written and to the resolved path, so neither a symlink nor ``..`` can launder a secret.
    Denials of ``exists``/``metadata`` use the same reason whether or not the path exists, so the
    policy is not an existence oracle.

This module is pure: standard library only, no configuration import (everything is a parameter).
"""

from __future__ import annotations

import errno
import fnmatch
import os
import re
import stat
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from swebash_ai.safety.protected_names import (
    ENV_ALLOWED,
    HISTORY_NAMES,
    HOME_CREDENTIALS,
    SECRET_GLOBS,
    SECRET_NAMES,
    SECRET_SUFFIXES,
)
from swebash_ai.safety.verdict import Verdict

__all__ = [
    "Op",
    "PathPolicy",
    "PathRefused",
    "check",
    "is_binary",
    "open_for_read",
]

Op = Literal["read", "list", "exists", "metadata", "write"]
OPS: frozenset[str] = frozenset({"read", "list", "exists", "metadata", "write"})


class PathRefused(ValueError):
    """A path the policy will not interpret or open (bad syntax, not a regular file, swapped...)."""


SECRET_REASON = "access to this path is not allowed (protected: credentials/secrets)"  # noqa: S105
SYSTEM_REASON = "access to this path is not allowed (protected: system credentials)"
PSEUDO_REASON = "access to this path is not allowed (protected: /proc, /sys and /dev are off limits)"
APP_REASON = "access to this path is not allowed (protected: the assistant's own configuration)"
CONFIG_REASON = "access to this path is not allowed (protected: denied by configuration)"
_RULE_OF_REASON: dict[str, str] = {
    SECRET_REASON: "path.denied.secret",
    SYSTEM_REASON: "path.denied.system",
    PSEUDO_REASON: "path.denied.pseudo_fs",
    APP_REASON: "path.denied.app_config",
    CONFIG_REASON: "path.denied.config",
}

# Under the home directory: the path itself and everything below it (the table, with whose each is, is in
# protected_names.py).
HOME_DENY: tuple[str, ...] = tuple(path for path, _whose in HOME_CREDENTIALS)
# Kernel files that describe the machine, not a process or a user: the CPU, memory, load, uptime and kernel
# version (what `nproc`, `free` and `uptime` print).  Everything else under /proc stays denied: another
# process's environ, cmdline, mem, fd and maps, and /proc/self/environ.
BENIGN_PSEUDO_FILES: frozenset[str] = frozenset(
    {"/proc/cpuinfo", "/proc/meminfo", "/proc/loadavg", "/proc/uptime", "/proc/version"}
)
# Absolute system paths (and below), with the reason shown.
SYSTEM_DENY: tuple[tuple[str, str], ...] = (
    ("/etc/shadow", SYSTEM_REASON),
    ("/etc/gshadow", SYSTEM_REASON),
    ("/etc/shadow-", SYSTEM_REASON),
    ("/etc/gshadow-", SYSTEM_REASON),
    ("/etc/sudoers", SYSTEM_REASON),
    ("/etc/sudoers.d", SYSTEM_REASON),
    ("/proc", PSEUDO_REASON),
    ("/sys", PSEUDO_REASON),
    ("/dev", PSEUDO_REASON),
)
_URL_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
# C0/C1 controls and the bidirectional overrides that make a path display differently than it is.
_CONTROL_RE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


# One pattern for all the globs: a walk or a snapshot judges every name of a workspace.
_SECRET_GLOB_RE = re.compile("|".join(f"(?:{fnmatch.translate(g)})" for g in SECRET_GLOBS))


def _lower_parts(p: Path) -> tuple[str, ...]:
    return tuple(part.lower() for part in p.parts)


# The home table's paths by their first name: a copy of one anywhere (``deploy/.aws/credentials``,
# ``ops/.docker/config.json``) holds what the original holds.
_NESTED_HOME: dict[str, list[tuple[str, ...]]] = {}
for _rel in HOME_DENY:
    _low = tuple(_rel.lower().split("/"))
    _NESTED_HOME.setdefault(_low[0], []).append(_low)


def _nested_home_copy(parts: tuple[str, ...]) -> bool:
    """True when lowered path ``parts`` hold a path of the home table at any depth."""
    for i, part in enumerate(parts):
        for rel in _NESTED_HOME.get(part, ()):
            if parts[i : i + len(rel)] == rel:
                return True
    return False


def _name_denied(name: str) -> bool:
    """True when a single file name is a secret by its name alone."""
    n = name.lower()
    if n in HISTORY_NAMES or n in SECRET_NAMES:
        return True
    if n.endswith(SECRET_SUFFIXES) and not n.endswith(".pub"):
        return True
    if _SECRET_GLOB_RE.match(n):
        return True
    # Custom-named ssh keys (id_github, id_work): no dot, so id_utils.py and id_rsa.pub stay readable.
    if n.startswith("id_") and "." not in n:
        return True
    return n == ".env" or (n.startswith(".env.") and n not in ENV_ALLOWED)


def syntax_problem(path: str) -> str | None:
    """Why a path string is refused before any resolution, or None when it is acceptable."""
    if not isinstance(path, str) or path == "":
        return "empty path"
    if "\x00" in path:
        return "path contains a NUL byte"
    if _CONTROL_RE.search(path):
        return "path contains control characters"
    if _URL_RE.match(path):
        return f"URLs are not file paths: {path!r}"
    if path.startswith("~") and not (path == "~" or path.startswith("~/")):
        return f"'~user' expansion is not supported, write the full path instead of {path!r}"
    if "$" in path:
        return f"shell variables are not expanded in paths, write the full path instead of {path!r}"
    return None


def _proc_alias(path: str, cwd: str) -> str:
    """``/proc/self/cwd/x`` is ``x`` in the working directory, ``/proc/self/root/x`` is ``/x``: judge what they name.

    Only the calling process's own aliases are rewritten (``self``, ``thread-self``); every other ``/proc``
    path stays protected.  For a command the "self" is the command itself, which runs in ``cwd``.  The
    rest of the path is kept as written (``..`` after a symlink is for the OS to resolve, not for the text).
    """
    parts = path.split("/")
    if len(parts) >= 4 and parts[0] == "" and parts[1] == "proc" and parts[2] in ("self", "thread-self"):
        if parts[3] == "cwd":
            return "/".join([cwd.rstrip("/") or "", *parts[4:]]) or "/"
        if parts[3] == "root":
            return "/" + "/".join(parts[4:])
    return path


def resolve_strictly(p: Path) -> Path:
    """``realpath`` that fails closed: a path the OS cannot resolve raises instead of being guessed.

    A missing file (or a component that is not a directory) is fine: what exists is resolved and the rest
    taken as written, as the OS would create it.  A symlink loop (ELOOP), a name too long (ENAMETOOLONG), a
    directory on the way that cannot be searched (EACCES) or any other error raise :class:`PathRefused`:
    such a path may lead anywhere, so it is denied rather than judged by its text.
    """
    text = os.fsencode(str(p))
    if len(text) >= 4096 or any(len(part) > 255 for part in text.split(b"/")):
        raise PathRefused(f"cannot resolve {str(p)[:80]}... (ENAMETOOLONG: File name too long); a path that "
                          "cannot be resolved is refused")
    try:
        return Path(os.path.realpath(p, strict=True))
    except (FileNotFoundError, NotADirectoryError):
        pass
    except OSError as e:
        code = errno.errorcode.get(e.errno or 0, "error")
        raise PathRefused(f"cannot resolve {p} ({code}: {e.strerror or e}); a path that cannot be resolved "
                          "is refused") from e
    except (RuntimeError, ValueError) as e:
        raise PathRefused(f"cannot resolve {p} ({e}); a path that cannot be resolved is refused") from e
    return Path(os.path.realpath(p))


# A repository's git config may hold credentials: an http.extraheader (CI checkouts store their token there),
# a password or token key, a password or a token as the user name in an http(s) remote URL.
_GIT_CONFIG_CREDENTIALS = re.compile(
    r"(?im)^\s*(?:extraheader|password|token|secret|pass)\s*=|https?://(?:[^/\s@:]+:[^/\s@]+|[A-Za-z0-9_\-]{20,})@"
)
GIT_CREDENTIALS_REASON = (
    "access to this path is not allowed (protected: this git config holds credentials, such as a token in a "
    "remote URL or an http.extraheader)"
)


def git_config_holds_credentials(path: Path) -> bool:
    """True when ``path`` is a git config file (``.../.git/config``, ``.../.git/modules/x/config``...) with credentials.

    Judged on its content, read when asked (at most 256 KiB): most repositories' configs hold none and stay
    readable; a CI checkout's or a clone with a token in its remote URL does not.
    """
    if path.name != "config" or ".git" not in path.parts:
        return False
    return config_text_holds_credentials(path)


def config_text_holds_credentials(path: Path) -> bool:
    """True when the git config file ``path`` (any name: ``~/.gitconfig`` too) holds credentials."""
    try:
        with open(path, "rb") as fh:
            text = fh.read(256 * 1024).decode("utf-8", errors="replace")
    except OSError:
        return False
    return _GIT_CONFIG_CREDENTIALS.search(text) is not None


class PathPolicy:
    """Decides allow/ask/deny for a path and an operation.

    Args:
        roots: Workspace roots; reads inside them are allowed.  Default: the current directory.
        extra_deny: More protected entries: glob patterns on names (``"*.sqlite"``, matched against
            every component, case-insensitively) or absolute/``~`` paths (that path and below).
        home: The home directory the ``~`` and home rules refer to.  Default: ``Path.home()``.
        protected_files: Files that are always denied, e.g. the config file that holds API keys.
    """

    def __init__(
        self,
        roots: Sequence[str | Path] | None = None,
        extra_deny: Sequence[str] = (),
        home: str | Path | None = None,
        protected_files: Sequence[str | Path] = (),
    ) -> None:
        self.home = Path(os.path.abspath(os.path.expanduser(str(home)) if home else Path.home()))
        self.home_real = Path(os.path.realpath(self.home))
        # The user's own git config files: protected, like a repository's, when they hold credentials.
        self._user_git_configs = frozenset(
            base / rel for base in (self.home, self.home_real) for rel in (".gitconfig", ".config/git/config")
        )
        raw_roots = list(roots) if roots else [os.getcwd()]
        self.roots: list[Path] = [Path(os.path.realpath(os.path.abspath(str(r)))) for r in raw_roots]
        self.deny_globs: list[str] = []
        self.deny_paths: list[tuple[Path, str]] = []
        self.protected: list[Path] = []
        # First: the first base that contains a path gives the reason, and the app's own files (also in the
        # home table at their default places) are best explained as such.
        for f in protected_files:
            lexical = Path(os.path.abspath(os.path.expanduser(str(f))))
            for q in {lexical, Path(os.path.realpath(lexical))}:
                self.protected.append(q)
                self.deny_paths.append((q, APP_REASON))
        for home_base in {self.home, self.home_real}:
            for rel in HOME_DENY:
                self.deny_paths.append((home_base / rel, SECRET_REASON))
        for p, reason in SYSTEM_DENY:
            self.deny_paths.append((Path(p), reason))
        for entry in extra_deny:
            if entry.startswith("/") or entry == "~" or entry.startswith("~/"):
                base = self.home / entry[2:] if entry.startswith("~") else Path(entry)
                norm = Path(os.path.normpath(base))
                self.deny_paths.append((norm, CONFIG_REASON))
                self.deny_paths.append((Path(os.path.realpath(norm)), CONFIG_REASON))
            elif entry:
                self.deny_globs.append(entry.lower())

    # -- resolution ------------------------------------------------------------------------------

    def _joined(self, path: str, cwd: str | None) -> str:
        """The path made absolute, NOT normalised: ``link/..`` must be resolved by following ``link`` first."""
        problem = syntax_problem(path)
        if problem:
            raise PathRefused(problem)
        if path == "~" or path.startswith("~/"):
            path = str(self.home) + path[1:]
        base = str(cwd) if cwd is not None else str(self.roots[0])
        return _proc_alias(_proc_alias(os.path.join(base, path), base), base)

    def _absolute(self, path: str, cwd: str | None) -> Path:
        return Path(os.path.normpath(self._joined(path, cwd)))

    def lexical(self, path: str, cwd: str | None = None) -> Path:
        """The path as written: absolute and normalised, symlinks not followed."""
        return self._absolute(path, cwd)

    def resolve(self, path: str, cwd: str | None = None) -> Path:
        """The path the OS will open: ``~`` expanded, relative to ``cwd``, symlinks and ``..`` followed in order.

        Raises:
            PathRefused: for refused syntax (``~user``, ``$VAR``, URLs, NUL and control characters), and for a
                path the OS cannot resolve (a symlink loop, a name too long, a directory that cannot be searched).
        """
        return resolve_strictly(Path(self._joined(path, cwd)))

    # -- rules -----------------------------------------------------------------------------------

    def _lowered_bases(self) -> list[tuple[tuple[str, ...], str]]:
        # Cached per list object: a copy of the policy may replace ``deny_paths`` (tools/search.py).
        src = self.deny_paths
        cache: tuple[object, int, list[tuple[tuple[str, ...], str]]] | None = getattr(self, "_bases", None)
        if cache is None or cache[0] is not src or cache[1] != len(src):
            cache = (src, len(src), [(_lower_parts(b), r) for b, r in src])
            self._bases = cache
        return cache[2]

    def denied_reason(self, p: Path) -> str | None:
        """The protection reason for one absolute path, judged from its text alone."""
        pp = _lower_parts(p)
        for bp, reason in self._lowered_bases():
            if pp[: len(bp)] == bp:
                return reason
        if p.parts and _name_denied(p.name):
            return SECRET_REASON
        if _nested_home_copy(pp):
            return SECRET_REASON
        if self.deny_globs:
            for part in p.parts:
                low = part.lower()
                if any(fnmatch.fnmatchcase(low, g) for g in self.deny_globs):
                    return CONFIG_REASON
        return None

    def name_reason(self, name: str) -> str | None:
        """The protection reason of one file or folder name alone (``.env``, ``id_rsa``, a ``path_deny`` glob): what
        :meth:`denied_reason` finds on a path's components, for a walk below a folder already judged (the sandbox
        policy's walk of the workspace: about a microsecond a name instead of tens)."""
        if _name_denied(name):
            return SECRET_REASON
        low = name.lower()
        if self.deny_globs and any(fnmatch.fnmatchcase(low, g) for g in self.deny_globs):
            return CONFIG_REASON
        return None

    def _protected_inodes(self) -> set[tuple[int, int]]:
        # Cached for a second: a walk over a pnpm-style tree sees thousands of multiply-linked files.
        now = time.monotonic()
        cached: tuple[float, set[tuple[int, int]]] | None = getattr(self, "_inodes", None)
        if cached is not None and now - cached[0] < 1.0:
            return cached[1]
        inodes = self._scan_protected_inodes()
        self._inodes = (now, inodes)
        return inodes

    def _scan_protected_inodes(self) -> set[tuple[int, int]]:
        candidates: list[Path] = [Path(p) for p, r in SYSTEM_DENY if r == SYSTEM_REASON]
        candidates += [self.home / rel for rel in HOME_DENY]
        candidates += [self.home / n for n in HISTORY_NAMES]
        candidates += self.protected
        for d in (".ssh", ".aws", ".gnupg", ".kube", ".azure"):
            try:
                with os.scandir(self.home / d) as it:
                    candidates += [Path(e.path) for e in it]
            except OSError:
                pass
        candidates += self._workspace_secret_files()
        out: set[tuple[int, int]] = set()
        for c in candidates:
            try:
                st = os.stat(c)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                out.add((st.st_dev, st.st_ino))
        return out

    def _workspace_secret_files(self, limit: int = 20_000) -> list[Path]:
        """Files in the workspace with a protected name (``.env``, ``*.pem``, ``id_rsa``...), so that a hard link
        elsewhere to one of them is caught too. Bounded: at most ``limit`` entries, VCS and dependency folders
        skipped; only walked when a multiply-linked file is checked, and cached with the other inodes."""
        found: list[Path] = []
        seen = 0
        stack = [str(r) for r in self.roots]
        while stack and seen < limit:
            try:
                with os.scandir(stack.pop()) as it:
                    for entry in it:
                        seen += 1
                        if entry.is_dir(follow_symlinks=False):
                            if entry.name not in (".git", ".hg", ".svn", "node_modules"):
                                stack.append(entry.path)
                        elif _name_denied(entry.name):
                            found.append(Path(entry.path))
            except OSError:
                continue
        return found

    def _hardlink_denied(self, resolved: Path) -> bool:
        try:
            st = os.stat(resolved)
        except OSError:
            return False
        if not stat.S_ISREG(st.st_mode) or st.st_nlink <= 1:
            return False
        return (st.st_dev, st.st_ino) in self._protected_inodes()

    def descriptor_reason(self, st: os.stat_result) -> str | None:
        """Why an opened file must not be read: a hard link to a protected file, judged on the descriptor's
        (device, inode), so a link renamed into place after :meth:`check` is still caught."""
        if stat.S_ISREG(st.st_mode) and st.st_nlink > 1 and (st.st_dev, st.st_ino) in self._protected_inodes():
            return SECRET_REASON
        return None

    def in_workspace(self, resolved: Path) -> bool:
        return any(resolved.is_relative_to(r) for r in self.roots)

    def check(self, path: str, op: str, cwd: str | None = None) -> Verdict:
        """Judge one path for one operation (``read``, ``list``, ``exists``, ``metadata``, ``write``)."""
        if op not in OPS:
            return Verdict.deny(f"unknown path operation {op!r}", rule="path.op")
        try:
            return self._check(path, op, cwd)
        except (OSError, RuntimeError, ValueError) as e:  # never raise; refuse what cannot be checked
            return Verdict.deny(f"could not check this path ({type(e).__name__}: {e})", rule="path.unresolvable")

    def _check(self, path: str, op: str, cwd: str | None) -> Verdict:
        try:
            joined = self._joined(path, cwd)
        except PathRefused as e:
            return Verdict.deny(f"path refused: {e}", rule="path.syntax")
        lexical = Path(os.path.normpath(joined))
        try:
            resolved = resolve_strictly(Path(joined))
        except PathRefused as e:
            return Verdict.deny(f"path refused: {e}", rule="path.unresolvable")
        if op in ("read", "exists", "metadata") and lexical == resolved and str(resolved) in BENIGN_PSEUDO_FILES:
            return Verdict.allow(rule="path.pseudo_benign")
        for p in (lexical, resolved):
            reason = self.denied_reason(p)
            if reason:
                return Verdict.deny(reason, rule=_RULE_OF_REASON[reason])
        if self._hardlink_denied(resolved):
            return Verdict.deny(SECRET_REASON, rule="path.denied.secret")
        if git_config_holds_credentials(resolved) or (
            resolved in self._user_git_configs and config_text_holds_credentials(resolved)
        ):
            return Verdict.deny(GIT_CREDENTIALS_REASON, rule="path.denied.secret")
        if op == "write" and any(part.lower() == ".git" for p in (lexical, resolved) for part in p.parts):
            return Verdict.deny(
                f"writing inside a .git directory is not allowed (it can install hooks that run code): {resolved}",
                rule="path.git_write",
            )
        if op == "write":
            from swebash_ai.safety.persistence import persistence_reason

            point = persistence_reason(str(lexical), "/", str(self.home), str(self.roots[0]))
            if point:  # floor: a person answers, whatever a rule, mode, hook or --yes says
                return Verdict("ask", [point], rule="path.persistence", severe=True)
        if self.in_workspace(resolved):
            if op == "write":
                return Verdict.ask(f"writes inside the workspace: {resolved}", rule="path.write")
            return Verdict.allow(rule="path.workspace")
        if op == "write":
            return Verdict.ask(f"writes outside the workspace: {resolved}", rule="path.outside_workspace")
        return Verdict.ask(f"outside the workspace: {resolved}", rule="path.outside_workspace")


def check(path: str, op: str, cwd: str | None = None) -> Verdict:
    """Judge ``path`` for ``op`` with the default policy rooted at ``cwd`` (or the current directory)."""
    root = cwd or os.getcwd()
    return PathPolicy(roots=[root]).check(path, op, cwd=root)


def open_for_read(
    path: Path, max_size: int, refuse: Callable[[os.stat_result], str | None] | None = None
) -> tuple[bytes, bool]:
    """Read at most ``max_size`` bytes of the regular file at the *resolved* ``path``.

    Opens with ``O_NOFOLLOW|O_NONBLOCK`` so a swapped-in symlink fails and a FIFO cannot block, refuses
    anything but a regular file, and checks that the opened descriptor really is ``path`` (a directory
    on the way may have been swapped between the policy check and the open).

    ``refuse`` judges the open descriptor's ``fstat`` (``PathPolicy.descriptor_reason``); a reason refuses.

    Returns:
        ``(data, truncated)`` where ``truncated`` says the file was longer than ``max_size``.

    Raises:
        PathRefused: not a regular file, or not the file that was checked.
        OSError: the file cannot be opened (missing, permission, a symlink at the last component).
    """
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = (
                "a directory"
                if stat.S_ISDIR(st.st_mode)
                else "a FIFO (named pipe)"
                if stat.S_ISFIFO(st.st_mode)
                else "a device"
                if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
                else "a socket"
                if stat.S_ISSOCK(st.st_mode)
                else "not a regular file"
            )
            raise PathRefused(f"refusing to read {path}: it is {kind}, only regular files can be read")
        why = refuse(st) if refuse is not None else None
        if why:
            raise PathRefused(f"refusing to read {path}: {why}")
        link = f"/proc/self/fd/{fd}"
        if os.path.exists(link):
            actual = os.readlink(link)
            if actual != str(path):
                raise PathRefused(
                    f"refusing to read {path}: the path changed between the check and the open "
                    f"(it now points to {actual})"
                )
        chunks: list[bytes] = []
        remaining = max_size + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        data = b"".join(chunks)
        return data[:max_size], len(data) > max_size
    finally:
        os.close(fd)


def is_binary(data: bytes) -> bool:
    """True when the first 8 KiB hold a NUL byte or invalid UTF-8 (a character cut at the end is fine)."""
    sample = data[:8192]
    if b"\x00" in sample:
        return True
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as e:
        # A multibyte character cut by the sample or the size cap: "unexpected end of data".
        return not (e.end == len(sample) and len(sample) - e.start < 4 and e.reason == "unexpected end of data")
    return False
