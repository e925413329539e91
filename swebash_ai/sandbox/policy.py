"""The sandbox policy: what a confined command may write, may only read, may not see, and where it may connect.

Contract:
    :func:`build_policy` gathers it once per run from the path guard (:class:`~swebash_ai.safety.paths.PathPolicy`:
    its workspace roots and the same protected tables, ``safety/protected_names.py``) and a few settings, into one
    frozen :class:`SandboxPolicy`. It reads the file system (which protected paths exist, where a worktree's git
    folder is) and changes nothing. Each backend (``bwrap.py``, ``landlock.py``, ``seatbelt.py``) renders the same
    value; :meth:`SandboxPolicy.describe` prints it for the user.

The rules:
    * writable: the workspace roots, and a private ``/tmp``;
    * read-only inside the workspace: ``.git/config`` and ``.git/hooks`` (of the resolved git folder, for
      worktrees and submodules too), a worktree's ``.git`` file, ``.swebash-ai/``, and the files trusted
      project hooks run (``read_only_files``): all of them run code later, outside the sandbox;
    * hidden (an empty folder, or an empty file): every protected path of the path guard that exists (the home
      table: ~/.ssh, ~/.aws, ~/.gnupg, keyrings, other assistants' auth files...; shell histories; the system's
      shadow and sudoers files; swebash-ai's own config, sessions and logs; ``path_deny`` paths) and every
      file in the workspace the guard denies by name (``.env``, ``id_rsa``, ``*.pem``, ``path_deny`` globs); and
      the service sockets of :data:`RUNTIME_SOCKETS` and ``$XDG_RUNTIME_DIR`` (the service acts outside);
    * everything else: read-only;
    * network: none (``allow_hosts`` is kept for the proxy), or all of it when ``exec_sandbox_network`` says so.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from swebash_ai.safety.paths import PSEUDO_REASON, PathPolicy
from swebash_ai.safety.protected_names import HISTORY_NAMES

__all__ = ["RUNTIME_SOCKETS", "WALK_LIMIT", "Hidden", "SandboxPolicy", "build_policy", "git_dirs"]

WALK_LIMIT = 20_000
"""Entries of the workspace looked at for files the guard denies by name; past it the rest is not looked at
(and :attr:`SandboxPolicy.notes` says so)."""
_SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules"})  # what the guard's own workspace walk skips


# Service sockets a confined command must not reach: a socket is writable on a read-only mount, and the service
# behind it acts outside the sandbox. (path, whose it is and why). Incomplete by nature, like every list of names:
# the user's runtime folder (XDG_RUNTIME_DIR) is hidden whatever it holds.
RUNTIME_SOCKETS: tuple[tuple[str, str], ...] = (
    ("/run/user", "per-user runtime folders: the systemd user manager and session bus (`systemd-run --user` runs "
     "a command outside), ssh and gpg agents, rootless Docker and Podman, PipeWire"),
    ("/run/dbus", "the system bus: polkit-gated actions, the system manager"),
    ("/run/systemd/private", "systemd's private socket: the system manager itself (root)"),
    ("/run/docker.sock", "Docker: a container with the host's / mounted"),
    ("/run/docker", "Docker's other sockets"),
    ("/run/containerd", "containerd"),
    ("/run/podman", "Podman (root)"),
    ("/run/crio", "CRI-O"),
    ("/run/libvirt", "libvirt: virtual machines"),
    ("/run/snapd.socket", "snapd: installs"),
    ("/run/snapd-snap.socket", "snapd"),
    ("/run/postgresql", "PostgreSQL: peer authentication lets the same user in"),
    ("/run/mysqld", "MySQL / MariaDB: socket authentication"),
    ("/run/redis", "Redis"),
)


@dataclass(frozen=True)
class Hidden:
    """A path the command must not see: a folder shows empty, a file shows as an empty file."""

    path: Path
    kind: Literal["dir", "file"]


@dataclass(frozen=True)
class SandboxPolicy:
    """One command's confinement, as data (see the module docstring). All paths are absolute and resolved."""

    writable: tuple[Path, ...]
    read_only: tuple[Path, ...] = ()
    """Paths inside a writable root that stay read-only (re-bound after the writable roots)."""
    pinned: tuple[Path, ...] = ()
    """Folders inside a writable root that must not be renamed away (a ``.git`` folder: a new one in its place
    would bring its own config); bound onto themselves so a rename fails."""
    hidden: tuple[Hidden, ...] = ()
    private_tmp: bool = True
    network: Literal["none", "full"] = "none"
    allow_hosts: tuple[str, ...] = ()
    """Hosts the proxy (``proxy.py``) lets a command reach; empty: none, and no proxy."""
    proxy: Path | None = None
    """The running proxy's unix socket, set by the runner when ``allow_hosts`` is not empty (bubblewrap binds it
    into the sandbox, with ``relay.py`` in front of the command)."""
    home: Path = field(default_factory=Path.home)
    notes: tuple[str, ...] = ()
    """What the policy could not do as asked (a protected folder that holds the workspace, a walk cut short)."""

    def describe(self) -> list[str]:
        """The policy as lines for ``swebash-ai sandbox --show``."""
        out = ["writable:"]
        out += [f"  {p}" for p in self.writable]
        if self.private_tmp:
            out.append("  /tmp (private, empty at the start, gone at the end)")
        out.append("read-only inside the workspace:")
        out += [f"  {p}" for p in self.read_only] or ["  (nothing)"]
        out.append("hidden (shown empty):")
        out += [f"  {h.path}{'/' if h.kind == 'dir' else ''}" for h in self.hidden] or ["  (nothing found here)"]
        out.append("everything else: read-only")
        if self.network == "full":
            out.append("network: all of it (exec_sandbox_network = true)")
        else:
            listed = ", ".join(self.allow_hosts)
            hosts = f", but HTTP(S) through swebash-ai's proxy to: {listed}" if listed else ""
            out.append(f"network: none{hosts}")
        out += [f"note: {n}" for n in self.notes]
        return out


def _real(p: Path) -> Path:
    return Path(os.path.realpath(p))


def _kind(p: Path) -> Literal["dir", "file"] | None:
    try:
        return "dir" if stat.S_ISDIR(os.stat(p).st_mode) else "file"
    except (OSError, ValueError):
        return None


def _readable(p: Path, kind: str) -> bool:
    """Whether this user can read ``p`` at all: what it cannot read (``/etc/shadow`` for anyone but root), a
    confined command of the same user cannot read either, and need not be covered (each cover is a mount: a
    fraction of a millisecond of every command)."""
    return os.access(p, os.R_OK) or (kind == "dir" and os.access(p, os.X_OK))


def git_dirs(root: Path) -> tuple[list[Path], list[Path], list[Path]]:
    """The git files of the repository at ``root`` that run code later: ``(read_only, pinned, git_folders)``.

    ``root/.git`` may be a folder (pinned; its ``config`` and ``hooks`` read-only, and those of its submodules
    under ``modules/``) or a file naming the real git folder (a worktree, a submodule): the file itself is
    read-only, and so are ``config``, ``config.worktree`` and ``hooks`` of the folder it names and of that
    folder's common directory (``commondir``)."""
    dot = root / ".git"
    read_only: list[Path] = []
    pinned: list[Path] = []
    folders: list[Path] = []
    if dot.is_dir() and not dot.is_symlink():
        folders.append(dot)
        pinned.append(dot)
    elif dot.is_file():
        read_only.append(dot)
        try:
            text = dot.read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        if text.startswith("gitdir:"):
            gitdir = _real(root / text[len("gitdir:"):].strip())
            folders.append(gitdir)
            try:
                common = (gitdir / "commondir").read_text(encoding="utf-8").strip()
                folders.append(_real(gitdir / common))
            except OSError:
                pass
    elif dot.is_symlink():
        folders.append(_real(dot))
    for folder in list(folders):
        modules = folder / "modules"
        if modules.is_dir():  # submodules' git folders: modules/NAME, nested ones modules/NAME/modules/SUB
            folders += [p.parent for p in modules.glob("**/config") if p.is_file()][:200]
    for folder in dict.fromkeys(folders):
        read_only += [folder / n for n in ("config", "config.worktree", "hooks") if (folder / n).exists()]
    return read_only, pinned, folders


def _inside(p: Path, roots: Iterable[Path]) -> bool:
    return any(p.is_relative_to(r) for r in roots)


@dataclass(frozen=True)
class _Listing:
    """What one folder held when it was read: protected names, sub-folders, whether it has ``.git``."""

    mtime_ns: int
    protected: tuple[str, ...]
    folders: tuple[str, ...]
    has_git: bool
    entries: int


_listings: dict[tuple[str, tuple[str, ...]], _Listing] = {}
_RACY_NS = 2_000_000_000  # a folder changed this recently may change again within its clock tick: read it anew


def _listing(paths: PathPolicy, folder: str) -> _Listing | None:
    """``folder``'s listing, from the cache while its mtime (any name added, removed or renamed) is unchanged."""
    try:
        st = os.stat(folder)
    except OSError:
        return None
    key = (folder, tuple(paths.deny_globs))
    cached = _listings.get(key)
    if cached is not None and cached.mtime_ns == st.st_mtime_ns:
        return cached
    protected, folders, has_git, entries = [], [], False, 0
    try:
        with os.scandir(folder) as it:
            for entry in it:
                entries += 1
                has_git = has_git or entry.name == ".git"
                if paths.name_reason(entry.name) is not None:  # a protected folder is hidden whole
                    protected.append(entry.name)
                elif entry.name not in _SKIP_DIRS and entry.is_dir(follow_symlinks=False):
                    folders.append(entry.name)
    except OSError:
        return None
    found = _Listing(st.st_mtime_ns, tuple(protected), tuple(folders), has_git, entries)
    if time.time_ns() - st.st_mtime_ns > _RACY_NS:
        if len(_listings) > 4 * WALK_LIMIT:
            _listings.clear()
        _listings[key] = found
    return found


def _walk_workspace(paths: PathPolicy, roots: Sequence[Path], limit: int) -> tuple[list[Path], list[Path], bool]:
    """Files in the workspace the guard denies by name, and nested repositories (folders holding ``.git``);
    ``True`` when the walk stopped at ``limit`` entries. A folder unchanged since the last walk is not read
    again (its mtime says so): a command's policy costs a stat per folder, not a look at every name."""
    secret: list[Path] = []
    repos: list[Path] = []
    seen = 0
    stack = [str(r) for r in roots]
    tops = set(stack)
    while stack:
        top = stack.pop()
        listing = _listing(paths, top)
        if listing is None:
            continue
        seen += listing.entries
        if seen > limit:
            return secret, repos, True
        if listing.has_git and top not in tops:
            repos.append(Path(top))
        secret += [Path(top, n) for n in listing.protected]
        stack += [os.path.join(top, n) for n in listing.folders]
    return secret, repos, False


def build_policy(
    paths: PathPolicy,
    *,
    own_dirs: Sequence[Path] = (),
    read_only_files: Sequence[Path] = (),
    allow_hosts: Sequence[str] = (),
    network: bool = False,
    walk_limit: int = WALK_LIMIT,
    runtime: Sequence[Path] | None = None,
) -> SandboxPolicy:
    """The policy for commands run in ``paths``' workspace roots.

    Args:
        paths: The session's path guard: its roots become the writable folders, its protected paths the hidden.
        own_dirs: swebash-ai's config, data and state folders (``storage.locations``): hidden whole.
        read_only_files: Files trusted project hooks run (the agent knows them): read-only.
        allow_hosts: The ``sandbox_allow_hosts`` setting.
        network: ``exec_sandbox_network``: leave the network open.
        walk_limit: How many workspace entries to look at for protected names.
        runtime: Service sockets and their folders to hide (default: :data:`RUNTIME_SOCKETS` and
            ``$XDG_RUNTIME_DIR``).
    """
    roots = tuple(dict.fromkeys(_real(r) for r in paths.roots))
    notes: list[str] = []
    candidates: list[Path] = [p for p, reason in paths.deny_paths if reason != PSEUDO_REASON]
    candidates += [paths.home / n for n in sorted(HISTORY_NAMES)]
    candidates += list(own_dirs)
    if runtime is None:
        xdg = os.environ.get("XDG_RUNTIME_DIR", "")
        runtime = [Path(p) for p, _why in RUNTIME_SOCKETS] + ([Path(xdg)] if os.path.isabs(xdg) else [])
    candidates += list(runtime)
    try:  # files straight in the home folder with a protected name (~/.env, ~/id_work)
        with os.scandir(paths.home) as it:
            candidates += [Path(e.path) for e in it if not e.is_dir() and paths.denied_reason(Path(e.path))]
    except OSError:
        pass
    secret, repos, cut = _walk_workspace(paths, roots, walk_limit)
    candidates += secret
    if cut:
        notes.append(f"only the first {walk_limit} entries of the workspace were looked at for protected file "
                     "names (.env, keys); files further in are not hidden")
    hidden: dict[Path, Hidden] = {}
    for cand in candidates:
        kind = _kind(cand)
        if kind is None or not _readable(cand, kind):
            continue
        real = _real(cand)
        if any(r.is_relative_to(real) for r in roots):
            notes.append(f"{real} is protected but holds the workspace: it is not hidden")
            continue
        hidden.setdefault(real, Hidden(real, kind))
    dirs = [h.path for h in hidden.values() if h.kind == "dir"]
    kept = [h for h in hidden.values() if not any(h.path != d and h.path.is_relative_to(d) for d in dirs)]
    read_only: list[Path] = []
    pinned: list[Path] = []
    for repo in (*roots, *repos):
        ro, pin, _ = git_dirs(repo)
        read_only += ro
        pinned += pin
    for root in roots:
        if (root / ".swebash-ai").exists():
            read_only.append(root / ".swebash-ai")
    read_only += [_real(f) for f in read_only_files if f.exists()]
    # A workspace that holds the home folder holds its persistence points: what is written there runs later,
    # outside the sandbox (the path guard's floor, safety/persistence.py), so they stay read-only.
    from swebash_ai.safety.persistence import HOME_POINTS

    read_only += [_real(paths.home / rel) for rel, _ in HOME_POINTS if (paths.home / rel).exists()]
    hidden_paths = [h.path for h in kept]
    in_ws = [p for p in dict.fromkeys(read_only) if _inside(p, roots) and not _inside(p, hidden_paths)]
    return SandboxPolicy(
        writable=roots,
        read_only=tuple(in_ws),
        pinned=tuple(p for p in dict.fromkeys(pinned) if _inside(p, roots)),
        hidden=tuple(sorted(kept, key=lambda h: str(h.path))),
        network="full" if network else "none",
        allow_hosts=tuple(dict.fromkeys(h.strip().lower() for h in allow_hosts if h.strip())),
        home=paths.home,
        notes=tuple(dict.fromkeys(notes)),
    )
