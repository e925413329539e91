"""Shadow-git snapshots of the workspace around approved commands, so undo can revert what they changed.

Contract:
    ``ShadowRepo(git_dir, root).snapshot()`` records the files under ``root`` as they are now (what git would
    add: ``.gitignore`` respected, ``.git`` folders skipped) as a commit in ``git_dir``, a repository of ours
    kept beside the sessions (never in the project), shared by every session and workspace: a file is stored
    once however many sessions snapshot it, and each workspace keeps its own index there, so only its first
    snapshot ever reads every file. It returns a :class:`Snapshot`: the commit, or ``None``
    with the reason it was skipped (too many files or bytes, over the time budget, git missing, a root that
    is not a project such as ``/`` or the home folder). :meth:`ShadowRepo.changes` lists what differs between
    two snapshots; :meth:`ShadowRepo.blob` reads a file's content back. :func:`matches` and :func:`restore`
    compare a path on disk with, and put it back to, a snapshot's entry.

    git keeps only "644", "755" and "symlink"; permission bits other than 0o644/0o755 are returned in
    :attr:`Snapshot.modes` for the caller to keep, so a restored ``0o600`` file is not widened.

    What the path policy protects is never stored: credentials and secret files by name (``.env``, ``id_rsa``,
    ``secrets.yaml``...), hard links to protected files, the user's ``path_deny`` entries, judged by the same
    guard as the tools (:class:`~swebash_ai.tools.guard.PolicyGate`). Their stat data is returned in
    :attr:`Snapshot.protected` instead, so undo can tell that such a file changed and say it cannot put it
    back. The repository is private (folders 0700, files 0600 or git's 0400): git runs with umask 077.

Why plumbing only, in a git dir of our own, with an environment built from nothing: the workspace may be
hostile, and a snapshot runs before every approved command. Nothing of the workspace configures this git: not
its ``.git/config`` (another git dir), not the user's global or system config, not its ``.gitattributes``
(our ``info/attributes``, which wins over them, unsets filter, text, eol, ident and working-tree-encoding for
every path, so content is stored byte for byte and no filter driver runs); no hooks (plumbing runs none, and
``core.hooksPath`` is ``/dev/null``), no fsmonitor. The index is kept between snapshots, so after the first
one git re-reads only files whose stat data changed.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from swebash_ai.errors import ToolError
from swebash_ai.storage import private_files
from swebash_ai.storage.pending_writes import SUFFIX
from swebash_ai.tools.atomic import write_atomically
from swebash_ai.tools.process import run_program

if TYPE_CHECKING:
    from swebash_ai.safety.paths import PathPolicy

__all__ = ["Change", "Entry", "Limits", "ShadowRepo", "Snapshot", "matches", "project_root", "restore",
           "stored_names"]

_ATTRIBUTES = "* -filter -text -eol -ident -working-tree-encoding -diff -merge\n"
_CONFIG = (
    ("core.hooksPath", "/dev/null"), ("core.fsmonitor", "false"), ("core.untrackedCache", "false"),
    ("core.autocrlf", "false"), ("core.safecrlf", "false"), ("core.symlinks", "true"), ("core.fileMode", "true"),
    ("core.quotePath", "false"), ("core.excludesFile", "/dev/null"), ("gc.auto", "0"), ("commit.gpgSign", "false"),
    ("index.threads", "1"),
)
_PLAIN_MODES = (0o644, 0o755)
GUARDED = "guarded"
"""A file in ``info/`` of a repository made since snapshots leave protected files out."""
_BACKGROUND = 120.0
"""How long a ``git add`` that outlived a snapshot's budget may go on in the background."""
_SLOW_FOR = 24 * 3600.0
"""After a snapshot of a workspace ran out of even that time, later ones are not tried for this long (each
would cost the whole budget again before the command it precedes)."""
_LOCKS: dict[Path, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


def _lock_for(index: Path) -> threading.Lock:
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(index, threading.Lock())


@dataclass(frozen=True)
class Limits:
    """How big a workspace may be to be snapshotted, and how long a snapshot may take."""

    max_files: int = 20_000
    max_bytes: int = 200 * 1024 * 1024
    seconds: float = 5.0


@dataclass(frozen=True)
class Snapshot:
    """A commit of the work tree, or ``commit=None`` and the ``reason`` it was not taken."""

    commit: str | None
    reason: str = ""
    modes: dict[str, int] = field(default_factory=dict)
    """Permission bits of the files (paths relative to the root) that are neither 0o644 nor 0o755."""
    files: int = 0
    seconds: float = 0.0
    protected: dict[str, list[int]] = field(default_factory=dict)
    """Files left out because the path policy protects them: ``[size, mtime_ns, ctime_ns, inode]`` each."""


@dataclass(frozen=True)
class Entry:
    """A path in a snapshot: git's mode (``100644``, ``100755``, ``120000``) and blob id."""

    mode: str
    blob: str


@dataclass(frozen=True)
class Change:
    """A path that differs between two snapshots (``None``: absent from that one)."""

    path: str
    before: Entry | None
    after: Entry | None


def project_root(cwd: Path) -> Path:
    """The folder to snapshot for a command run in ``cwd``: the enclosing repository's top, else ``cwd``."""
    home = Path.home().resolve()
    cwd = cwd.resolve()
    for folder in (cwd, *cwd.parents):
        if folder == home or folder == Path(folder.anchor):
            break
        if (folder / ".git").exists():
            return folder
    return cwd


def _unsuitable(root: Path) -> str | None:
    home = Path.home().resolve()
    if root == Path(root.anchor):
        return "the workspace is the root folder"
    if root == home or root in home.parents:
        return "the workspace is your home folder (or above it)"
    if not root.is_dir():
        return "the workspace is not a folder"
    return None


def blob_id(data: bytes) -> str:
    """git's id of a blob holding ``data``."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


class ShadowRepo:
    """The snapshot repository (``git_dir``, shared by all sessions) seen from the work tree ``root``."""

    def __init__(self, git_dir: Path, root: Path, limits: Limits | None = None,
                 policy: PathPolicy | None = None) -> None:
        self.git_dir = git_dir
        self.root = root
        self.limits = limits or Limits()
        self.policy = policy
        """The tools' path policy; ``None``: the default one, rooted at ``root``."""
        # One index per work tree, so snapshots of two workspaces do not rehash each other's files.
        self.index = git_dir / "indexes" / hashlib.sha256(str(root).encode()).hexdigest()[:16]

    def _env(self) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.git_dir), "LANG": "C",
            "GIT_DIR": str(self.git_dir), "GIT_WORK_TREE": str(self.root), "GIT_INDEX_FILE": str(self.index),
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_ATTR_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0", "GIT_AUTHOR_NAME": "swebash-ai", "GIT_AUTHOR_EMAIL": "undo@swebash-ai",
            "GIT_COMMITTER_NAME": "swebash-ai", "GIT_COMMITTER_EMAIL": "undo@swebash-ai",
        }

    def _git(self, *args: str, deadline: float, init: bool = False, data: bytes | None = None) -> bytes:
        git = shutil.which("git")
        if git is None:
            raise ToolError("git is not installed")
        left = deadline - time.monotonic()
        if left <= 0:
            raise ToolError(f"the snapshot took longer than {self.limits.seconds:g} s")
        env = self._env()
        if init:  # git init takes its folder as an argument and refuses a work tree without a git dir
            del env["GIT_DIR"], env["GIT_WORK_TREE"], env["GIT_INDEX_FILE"]
        config = [part for key, value in _CONFIG for part in ("-c", f"{key}={value}")]
        try:
            return run_program([git, *config, *args], env=env, cwd=self.root, timeout=left,
                               umask=private_files.UMASK, data=data)
        except ToolError as exc:
            raise ToolError(exc.message.replace("git -c", f"git {args[0]}", 1)) from None

    def _init(self, deadline: float) -> None:
        info = self.git_dir / "info"
        if not (self.git_dir / "HEAD").exists():
            private_files.make_dirs(self.git_dir.parent)
            self._git("init", "-q", "--bare", str(self.git_dir), deadline=deadline, init=True)
            # Stores without this mark come from before protected files were left out: dropped at start-up.
            private_files.write_file(info / GUARDED, b"")
        if not (info / "attributes").exists():
            private_files.write_file(info / "attributes", _ATTRIBUTES.encode())
        private_files.make_dirs(self.index.parent)

    def snapshot(self) -> Snapshot:
        """Commit the work tree as it is now; on any limit or failure, say why instead (never raises)."""
        reason = _unsuitable(self.root)
        if reason is not None:
            return Snapshot(None, reason)
        slow = self.index.with_suffix(".slow")
        try:
            if time.time() - slow.stat().st_mtime < _SLOW_FOR:
                return Snapshot(None, f"a snapshot of this workspace took longer than {self.limits.seconds:g} s "
                                "earlier today")
        except OSError:
            pass
        lock = _lock_for(self.index)  # two commands of one process must not share the index at once
        if not lock.acquire(timeout=self.limits.seconds):
            return Snapshot(None, "another snapshot of this workspace is still being made")
        handed_over = threading.Event()  # set when a background `git add` took the lock over
        try:
            found = self._snapshot(lock, handed_over)
        finally:
            if not handed_over.is_set():
                lock.release()
        if found.commit is None and "took longer" in found.reason:
            self._gave_up()
        return found

    def _gave_up(self) -> None:
        with contextlib.suppress(OSError):
            Path(f"{self.index}.lock").unlink(missing_ok=True)  # the git we stopped left it behind
            private_files.write_file(self.index.with_suffix(".slow"), b"")

    def _add(self, deadline: float, lock: threading.Lock, handed_over: threading.Event,
             excluded: list[str]) -> bool:
        """``git add`` the work tree; ``False`` when it is still running at ``deadline``. It then goes on in
        the background (holding ``lock``) up to :data:`_BACKGROUND`, so that this snapshot is lost but the
        next ones find the index warm: a big workspace's first snapshot reads every file."""
        done = threading.Event()
        gate = threading.Lock()  # who frees ``lock`` is decided under it: the worker once handed over, else us

        def work() -> None:
            try:
                # --ignore-errors: an unreadable file is left out rather than failing the snapshot (exit 1).
                # Protected files are never hashed: git would copy their content into the object store.
                self._git("add", "-A", "--ignore-errors", "--", ".", _NOT_TEMPORARY,
                          *(f":(exclude,literal){n}" for n in excluded),
                          deadline=time.monotonic() + _BACKGROUND)
            except ToolError as exc:
                if "took longer" in exc.message:
                    self._gave_up()
            finally:
                with gate:
                    done.set()
                    mine = handed_over.is_set()
                if mine:
                    lock.release()

        threading.Thread(target=work, name="snapshot-add", daemon=True).start()
        if done.wait(max(0.0, deadline - time.monotonic())):
            return True
        with gate:
            if done.is_set():
                return True
            handed_over.set()
        return False

    def _snapshot(self, lock: threading.Lock, handed_over: threading.Event) -> Snapshot:
        start = time.monotonic()
        deadline = start + self.limits.seconds
        try:
            self._init(deadline)
            listed = self._git("ls-files", "-z", "-t", "--cached", "--others", "--exclude-standard", "--", ".",
                               _NOT_TEMPORARY, deadline=deadline)
            tagged = [n for n in listed.decode("utf-8", "surrogateescape").split("\0") if n]
            if len(tagged) > self.limits.max_files:
                return Snapshot(None, f"the workspace has over {self.limits.max_files:,} files")
            guard = _Guard(self.policy, self.root)
            if guard.root_denied():
                return Snapshot(None, "the workspace is a protected folder")
            size, modes, protected, staged = 0, {}, {}, []
            names = [t[2:] for t in tagged]
            for tag, name in zip((t[0] for t in tagged), names, strict=True):
                try:
                    st = os.lstat(self.root / name)
                except OSError:
                    st = None
                if guard.denied(name, st):
                    protected[name] = [] if st is None else [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
                    if tag != "?":  # in the index from an earlier snapshot (a path_deny entry added since)
                        staged.append(name)
                    continue
                if st is None:
                    continue
                size += st.st_size
                bits = stat.S_IMODE(st.st_mode)
                if stat.S_ISREG(st.st_mode) and bits not in _PLAIN_MODES:
                    modes[name] = bits
            if size > self.limits.max_bytes:
                return Snapshot(None, f"the workspace holds over {self.limits.max_bytes // 2**20} MiB")
            if staged:
                self._git("rm", "--cached", "-q", "--ignore-unmatch", "--", *(f":(literal){n}" for n in staged),
                          deadline=deadline)
            if not self._add(deadline, lock, handed_over, list(protected)):
                return Snapshot(None, f"the first snapshot of this workspace takes over {self.limits.seconds:g} s; "
                                "it goes on in the background, so later commands can be undone")
            tree = self._git("write-tree", deadline=deadline).decode().strip()
            commit = self._git("commit-tree", tree, "-m", "snapshot", deadline=deadline).decode().strip()
        except (ToolError, OSError) as exc:
            return Snapshot(None, exc.message if isinstance(exc, ToolError) else f"cannot write the snapshot: {exc}")
        return Snapshot(commit, modes=modes, files=len(names) - len(protected), seconds=time.monotonic() - start,
                        protected=protected)

    def changes(self, before: str, after: str) -> list[Change]:
        """The paths that differ between two snapshots (content, kind or executable bit)."""
        deadline = time.monotonic() + max(self.limits.seconds, 30.0)
        raw = self._git("diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", "--raw",
                        before, after, deadline=deadline)
        parts = raw.decode("utf-8", "surrogateescape").split("\0")
        out: list[Change] = []
        for meta, path in zip(parts[0::2], parts[1::2], strict=False):
            if not meta.startswith(":"):
                continue
            old_mode, new_mode, old_blob, new_blob, _status = meta[1:].split(" ")
            if "160000" in (old_mode, new_mode):
                continue  # a repository inside the workspace: its content is not ours to snapshot
            out.append(Change(path, None if old_mode == "000000" else Entry(old_mode, old_blob),
                              None if new_mode == "000000" else Entry(new_mode, new_blob)))
        return out

    def blob(self, blob: str) -> bytes:
        return self._git("cat-file", "blob", blob, deadline=time.monotonic() + 30.0)


#: Never snapshot an atomic write's temporary file: it is not the user's, and undo must not bring one back.
_NOT_TEMPORARY = f":(exclude,glob)**/.*{SUFFIX}"


def stored_names(git_dir: Path, seconds: float = 30.0) -> set[str]:
    """Every file name (last component) stored in the repository's trees, for ``doctor``: a store made before
    protected files were left out may still hold some."""
    if not (git_dir / "HEAD").exists():
        return set()
    repo = ShadowRepo(git_dir, git_dir, Limits(seconds=seconds))
    deadline = time.monotonic() + seconds
    listing = repo._git("cat-file", "--batch-all-objects", "--batch-check=%(objecttype) %(objectname)",
                        deadline=deadline).decode()
    trees = [line[5:] for line in listing.splitlines() if line.startswith("tree ")]
    if not trees:
        return set()
    raw = repo._git("cat-file", "--batch", deadline=deadline, data="\n".join(trees).encode() + b"\n")
    names: set[str] = set()
    at = 0
    while at < len(raw):  # "<id> tree <size>\n<size bytes>\n", the body "<mode> <name>\0<20-byte id>"...
        head_end = raw.index(b"\n", at)
        size = int(raw[at:head_end].split()[2])
        body, at = raw[head_end + 1:head_end + 1 + size], head_end + 2 + size
        pos = 0
        while pos < len(body):
            nul = body.index(b"\0", pos)
            names.add(body[body.index(b" ", pos) + 1:nul].decode("utf-8", "surrogateescape"))
            pos = nul + 21
    return names


class _Guard:
    """The tools' path guard over a snapshot's relative names: every folder on the way and the name itself
    (a ``path_deny`` glob may name a folder), hard links checked in full."""

    def __init__(self, policy: PathPolicy | None, root: Path) -> None:
        from swebash_ai.safety.paths import PathPolicy
        from swebash_ai.tools.guard import PolicyGate

        self.root = str(root)
        self.gate = PolicyGate(policy if policy is not None else PathPolicy(roots=[root]))
        self.folders: dict[str, bool] = {"": False}
        self.full: dict[str, bool] = {}
        self.names: dict[str, bool] = {}  # where only names matter, a name judged once (``__init__.py``...)

    def root_denied(self) -> bool:
        return self.gate.policy.denied_reason(Path(self.root)) is not None

    def _entry(self, parent: str, name: str) -> bool:
        full = self.full.get(parent)
        if full is None:
            full = self.full[parent] = self.gate.full_check_below(os.path.join(self.root, parent))
        if full:
            return self.gate.denied(os.path.join(self.root, parent, name), name, True)
        known = self.names.get(name)
        if known is None:
            known = self.names[name] = self.gate.denied(name, name, False)
        return known

    def _folder(self, rel: str) -> bool:
        known = self.folders.get(rel)
        if known is None:
            parent, _, name = rel.rpartition("/")
            known = self.folders[rel] = self._folder(parent) or self._entry(parent, name)
        return known

    def denied(self, rel: str, st: os.stat_result | None) -> bool:
        parent, _, name = rel.rpartition("/")
        if self._folder(parent) or self._entry(parent, name):
            return True
        return (st is not None and stat.S_ISREG(st.st_mode) and st.st_nlink > 1
                and self.gate.read_denied(os.path.join(self.root, rel)))


def _inside(folder: Path, root: Path) -> bool:
    """Whether ``folder``, with its symlinks followed as far as it exists, is ``root`` or under it: a command
    may have replaced a folder with a link to elsewhere, and undo must not write through it."""
    real, top = os.path.realpath(folder), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def matches(path: Path, entry: Entry | None) -> bool:
    """Whether ``path`` on disk is what ``entry`` recorded (``None``: that it does not exist)."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):  # a parent replaced by a file: the path is gone too
        return entry is None
    if entry is None:
        return False
    if entry.mode == "120000":
        return stat.S_ISLNK(st.st_mode) and blob_id(os.fsencode(os.readlink(path))) == entry.blob
    if not stat.S_ISREG(st.st_mode) or bool(st.st_mode & 0o100) != (entry.mode == "100755"):
        return False
    return blob_id(path.read_bytes()) == entry.blob


def restore(repo: ShadowRepo, path: Path, entry: Entry | None, mode: int | None) -> str:
    """Put ``path`` back to ``entry`` (``None``: remove it); ``mode``: its exact permission bits, if kept.
    Returns what was done, for the undo summary."""
    if not _inside(path.parent, repo.root):
        return "NOT restored (a folder on its way now leads outside the workspace)"
    if entry is None:
        try:
            if path.is_dir() and not path.is_symlink():
                return "left in place (it is a folder now)"
            path.unlink()
        except FileNotFoundError:
            return "already gone"
        return "removed (it did not exist before)"
    data = repo.blob(entry.blob)
    if entry.mode == "120000":
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.undo-{os.getpid()}")
        os.symlink(os.fsdecode(data), tmp)
        os.replace(tmp, path)
        return f"restored (a link to {os.fsdecode(data)})"
    if path.is_dir() and not path.is_symlink():
        return "NOT restored (a folder is in its place now)"
    write_atomically(path, data, mode=mode if mode is not None else (0o755 if entry.mode == "100755" else 0o644))
    return f"restored ({len(data)} bytes)"
