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
from swebash_ai.safety.protected_names import HISTORY_NAMES, HOME_CREDENTIALS
from swebash_ai.sandbox.view import Shown, shown, within

__all__ = ["RUNTIME_SOCKETS", "SHOWN_WALK_DEPTH", "WALK_LIMIT", "Hidden", "SandboxPolicy", "Shown", "build_policy",
           "git_dirs"]

WALK_LIMIT = 50_000
"""Entries of the workspace looked at for files the guard denies by name; past it the rest is not looked at
(and :attr:`SandboxPolicy.notes` says so)."""
_SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules"})  # what the guard's own workspace walk skips
SHOWN_WALK_DEPTH = 1
"""How deep the folders shown from home (toolchains, ``sandbox_read``) are looked at for protected names: the folder
and its sub-folders. The table shows a toolchain's own folders, not the ones beside its credentials
(``~/.cargo/bin``, not ``~/.cargo``); deeper, a toolchain holds its own files (a CA bundle named ``cacert.pem`` that
a name rule would hide), and every folder walked is a ``stat`` on every command."""
# The home table's entries by their last name, with the folders they sit in (".docker/config.json" ->
# "config.json": (".docker",)): a copy of ~/.aws or ~/.docker/config.json anywhere in the workspace is hidden too.
_NESTED: dict[str, list[tuple[str, ...]]] = {}
for _rel, _why in HOME_CREDENTIALS:
    *_parents, _last = _rel.split("/")
    _NESTED.setdefault(_last, []).append(tuple(_parents))


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
    view: tuple[Shown, ...] | None = None
    """What the command sees besides the writable roots and a private ``/tmp`` (``view.py``'s tables): nothing
    else exists in there. ``None``: the whole file system, read-only (a policy built by hand for a test);
    :func:`build_policy` always lists it."""
    sealed: tuple[Path, ...] = ()
    """Folders git runs code from that do not exist yet (``.git/hooks``, ``.git/info``...): shown as empty
    read-only folders (bubblewrap leaves the empty folder on the disk, its mount point: git ignores it)."""
    env_pass: tuple[str, ...] = ()
    """Variables the user lets through on top of ``view.ENV_PASS`` (``[sandbox] env_pass``)."""
    repos: tuple[Path, ...] | None = None
    """The nested repositories the walk found as the policy was built (``None``: not walked): the check before a
    run (``planted.py``) starts from them instead of walking the workspace again."""

    @property
    def empty_home(self) -> Path | None:
        """The home folder when the command sees it as an empty, read-only folder holding only the view's
        entries; ``None`` when the whole disk is shown, or the workspace holds the home folder."""
        if self.view is None or any(self.home.is_relative_to(w) for w in self.writable):
            return None
        return self.home

    def describe(self) -> list[str]:
        """The policy as lines for ``swebash-ai sandbox --show``."""
        out = ["writable:"]
        out += [f"  {p}" for p in self.writable]
        if self.private_tmp:
            out.append("  /tmp (private, empty at the start, gone at the end: what is written there is lost)")
        if self.view is not None:
            out += [f"  {s.path} ({s.why})" for s in self.view if s.mode == "rw"]
            out.append("writable, every write thrown away at the end (caches):")
            out += [f"  {s.path} ({s.why})" for s in self.view if s.mode == "cache"] or ["  (nothing)"]
        out.append("read-only inside the workspace:")
        out += [f"  {p}" for p in [*self.read_only, *self.sealed]] or ["  (nothing)"]
        if self.view is not None:
            out.append("read-only, shown from outside the workspace:")
            out += [f"  {s.path} ({s.why})" for s in self.view if s.mode == "ro"]
            if self.empty_home is not None:
                out.append(f"  {self.empty_home} (empty: only the folders above that are in it)")
        out.append("hidden (shown empty):")
        out += [f"  {h.path}{'/' if h.kind == 'dir' else ''}" for h in self.hidden] or ["  (nothing found here)"]
        if self.view is not None:
            out.append("everything else (the rest of home, other projects, parent folders, /run, /var, /mnt, "
                       "sockets outside the workspace): absent")
        else:
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
        read_only += [folder / n for n in ("config", "config.worktree", "hooks", *_GIT_SEALED[1:])
                      if (folder / n).exists()]
    return read_only, pinned, folders


# Folders of a git folder that git runs code from or that point it elsewhere: read-only when they exist, empty and
# read-only when they do not (hooks; info/attributes names filter drivers; modules/ holds submodules' configs;
# worktrees/ the linked worktrees' commondir and config.worktree).
_GIT_SEALED = ("hooks", "info", "modules", "worktrees")


def _sealed(folders: Sequence[Path]) -> list[Path]:
    """The folders of :data:`_GIT_SEALED` missing from the git folders given."""
    return [f / n for f in folders for n in _GIT_SEALED if f.is_dir() and not os.path.lexists(f / n)]


def _inside(p: Path, roots: Iterable[Path]) -> bool:
    return any(within(p, r) for r in roots)


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
    parts = Path(folder).parts
    try:
        with os.scandir(folder) as it:
            for entry in it:
                entries += 1
                has_git = has_git or entry.name == ".git"
                nested = any(not up or parts[-len(up):] == up for up in _NESTED.get(entry.name, ()))
                if nested or paths.name_reason(entry.name) is not None:  # a protected folder is hidden whole
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


def _walk_workspace(paths: PathPolicy, roots: Sequence[Path], limit: int,
                    depth: int | None = None) -> tuple[list[Path], list[Path], bool]:
    """Files in the workspace the guard denies by name (or that copy a path of its home table: ``deploy/.aws``),
    and nested repositories (folders holding ``.git``); ``True`` when the walk stopped at ``limit`` entries, or
    ``depth`` folders down. A folder unchanged since the last walk is not read again (its mtime says so): a
    command's policy costs a stat per folder, not a look at every name."""
    secret: list[Path] = []
    repos: list[Path] = []
    seen = 0
    stack = [str(r) for r in roots]
    tops = set(stack)
    levels = {s: 0 for s in stack}
    while stack:
        top = stack.pop()
        level = levels.pop(top, 0)
        listing = _listing(paths, top)
        if listing is None:
            continue
        seen += listing.entries
        if seen > limit:
            return secret, repos, True
        if listing.has_git and top not in tops:
            repos.append(Path(top))
        secret += [Path(top, n) for n in listing.protected]
        if depth is not None and level >= depth:
            continue
        for name in listing.folders:
            levels[os.path.join(top, name)] = level + 1
            stack.append(os.path.join(top, name))
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
    read: Sequence[str | Path] = (),
    write: Sequence[str | Path] = (),
    env_pass: Sequence[str] = (),
    whole_disk: bool = False,
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
        read: ``sandbox_read``: more folders shown read-only (``~`` expands).
        write: ``sandbox_write``: more folders shown writable.
        env_pass: ``sandbox_env_pass``: more variables the command gets.
        whole_disk: Show the whole file system read-only instead of the view (the old policy; for tests).
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
    view = None if whole_disk else tuple(shown(paths.home, read=read, write=write, workspace=roots))
    if view is not None:  # what is shown from home (and the user's additions) is looked at too, not as deep
        extra = [v.path for v in view if v.mode != "cache" and (within(v.path, paths.home) or v.why in (
            "sandbox_read", "sandbox_write"))]
        candidates += _walk_workspace(paths, extra, walk_limit, depth=SHOWN_WALK_DEPTH)[0]
    if cut:
        notes.append(f"only the first {walk_limit} entries of the workspace were looked at for protected file "
                     "names (.env, keys); files further in are not hidden")
    hidden: dict[Path, Hidden] = {}
    for cand in candidates:
        kind = _kind(cand)
        if kind is None or not _readable(cand, kind):
            continue
        real = _real(cand)
        if any(within(r, real) for r in roots):
            notes.append(f"{real} is protected but holds the workspace: it is not hidden")
            continue
        hidden.setdefault(real, Hidden(real, kind))
    dirs = [h.path for h in hidden.values() if h.kind == "dir"]
    kept = [h for h in hidden.values() if not any(h.path != d and within(h.path, d) for d in dirs)]
    if view is not None:  # only what the command could see needs covering: each cover is a mount
        seen = [*roots, *(_real(v.path) for v in view)]
        kept = [h for h in kept if _inside(h.path, seen)]
    read_only: list[Path] = []
    pinned: list[Path] = []
    sealed: list[Path] = []
    for repo in (*roots, *repos):
        ro, pin, folders = git_dirs(repo)
        read_only += ro
        pinned += pin
        sealed += _sealed(folders)
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
        view=view,
        sealed=tuple(p for p in dict.fromkeys(sealed) if _inside(p, roots) and not _inside(p, hidden_paths)),
        env_pass=tuple(env_pass),
        repos=None if cut else tuple(repos),
    )
