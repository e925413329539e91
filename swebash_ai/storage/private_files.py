"""The application's own storage is private: its folders 0700 and its files 0600, whatever the umask.

Contract:
    Every writer of the data, state and config folders (saved sessions, checkpoints and their blobs, the
    snapshot repository, the audit log, the prompt history, caches) goes through :func:`make_dirs`,
    :func:`write_file` (atomic) or :func:`open_append`; git, which writes the snapshot repository itself, runs
    with :data:`UMASK`. :func:`tighten_once` fixes an install made before that, once, at start-up (a marker
    file makes every later start cost one ``stat``); :func:`exposed` lists what is still readable by others,
    for ``swebash-ai doctor``.

Why: transcripts hold what the model read (source files, command output), checkpoints and snapshots hold
copies of the workspace. Under the usual umask 022 they would be world-readable on a shared machine; SSH and
GnuPG keep such data private whatever the umask, and so does this.

Files the user asked to write in a workspace never come here: they keep the workspace's normal modes
(:mod:`swebash_ai.tools.atomic`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

from swebash_ai.storage.locations import Locations
from swebash_ai.storage.pending_writes import noted, temporary_name

__all__ = [
    "DIR_MODE",
    "FILE_MODE",
    "UMASK",
    "exposed",
    "locked",
    "make_dirs",
    "open_append",
    "replace_atomically",
    "tighten",
    "tighten_once",
    "write_file",
]

log = logging.getLogger(__name__)

DIR_MODE = 0o700
FILE_MODE = 0o600
UMASK = 0o077
"""The umask of the programs that write our storage themselves (git, for the snapshot repository)."""
MARKER = ".private-v1"
"""In the state folder: the install was tightened (and snapshot stores from before that were dropped)."""
SNAPSHOTS_CLEARED = "snapshots.cleared"
"""In the sessions folder: when the snapshot repository of an older version was removed (undo names it)."""
_OTHERS = 0o077


def make_dirs(path: Path) -> None:
    """Create ``path`` and its missing parents, each 0700 (existing folders are left as they are)."""
    missing: list[Path] = []
    for folder in (path, *path.parents):
        if folder.is_dir():
            break
        missing.append(folder)
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):
            folder.mkdir(DIR_MODE)
            os.chmod(folder, DIR_MODE)  # mkdir's mode is filtered by the umask, which may be odd (0o277)


def write_file(path: Path, data: bytes | Iterable[bytes]) -> None:
    """Write ``data`` (bytes, or pieces written one after the other: a large session is never joined in
    memory) to ``path`` atomically, mode 0600, creating its folders 0700. This module stays free of the tools
    package, so the TUI can use it before its first frame."""
    make_dirs(path.parent)
    replace_atomically(path, data, FILE_MODE)


def replace_atomically(path: Path, data: bytes | Iterable[bytes], mode: int, *, exclusive: bool = False) -> None:
    """The one atomic write (here, and for workspace files in ``tools.atomic``): a temporary file beside
    ``path`` (created 0600), fsynced, given ``mode``, then ``os.replace`` (``os.link`` when ``exclusive``: an
    existing file is never replaced). A crash leaves the old content or the new, never half of either; the
    temporary file is named and journaled so that nothing takes it for the user's and a kill's is removed at
    the next start (:mod:`swebash_ai.storage.pending_writes`)."""
    tmp = temporary_name(path)
    with noted(tmp):  # a kill leaves the temporary file: the next start removes it (pending_writes.sweep)
        for _ in range(100):  # a name taken already (a one in four billion chance) gets another, as mkstemp
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
                break
            except FileExistsError:
                tmp = temporary_name(path)
        else:
            raise FileExistsError(f"no free temporary name beside {path}")
        try:
            with os.fdopen(fd, "wb") as f:
                if isinstance(data, bytes):
                    f.write(data)
                else:
                    f.writelines(data)
                f.flush()
                os.fsync(f.fileno())
            if mode != FILE_MODE:
                os.chmod(tmp, mode)
            if exclusive:
                os.link(tmp, path)
                os.unlink(tmp)
            else:
                os.replace(tmp, path)
        except BaseException:  # an error, Ctrl-C, a cancelled task: nothing is left behind
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def _private_opener(path: str, flags: int) -> int:
    fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
    try:
        if stat.S_IMODE(os.fstat(fd).st_mode) & _OTHERS:  # an older file: narrow it while it is open
            os.fchmod(fd, FILE_MODE)
    except OSError:
        os.close(fd)
        raise
    return fd


def open_append(path: Path, *, readable: bool = False) -> IO[bytes]:
    """``path`` opened to append bytes (``a+b`` when ``readable``), created 0600 in 0700 folders. Unbuffered:
    each ``write`` is one ``write(2)`` in ``O_APPEND`` mode, so lines of concurrent writers never interleave. A
    symlink in its place is refused (``ELOOP``): nothing planted in our folders makes us write elsewhere."""
    make_dirs(path.parent)
    return open(path, "a+b" if readable else "ab", buffering=0, opener=_private_opener)


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock (``flock``) on the file ``path`` (created 0600) for the ``with`` block.

    For read-check-write sequences between processes of this app (two instances saving one session). The
    lock goes with the process: a writer killed while holding it blocks nobody. The lock file itself stays
    (removing it would race with a process that just opened it)."""
    import fcntl

    with open_append(path) as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def _walk(top: Path) -> Iterator[tuple[str, int, list[str]]]:
    """``(folder, its fd, its entries that are not folders)`` below ``top``, without following any link
    inside it (``top`` itself may be a link: the user put the folder there)."""
    real = os.path.realpath(top)
    if not os.path.isdir(real):
        return
    for folder, _dirs, files, fd in os.fwalk(real, follow_symlinks=False):
        yield folder, fd, files


def _too_wide(top: Path) -> bool:
    """``/``, the home folder or above it: ``SWEBASH_AI_HOME=~`` must not touch every file the user has."""
    real = Path(os.path.realpath(top))
    home = Path(os.path.realpath(Path.home()))
    return real == Path(real.anchor) or real == home or real in home.parents


def _unsafe_top(top: Path) -> bool:
    """A folder that is not ours alone to tighten: too wide, or shared like ``/tmp`` (writable by others, or
    another account's)."""
    if _too_wide(top):
        return True
    real = os.path.realpath(top)
    try:
        st = os.stat(real)
    except OSError:
        return False
    return st.st_uid != os.geteuid() or bool(st.st_mode & (stat.S_IWOTH | stat.S_ISVTX))


def _narrow(name: str, dir_fd: int) -> bool:
    """Remove the group and other bits of the regular file ``name``; ``False`` when it could not be done.
    Opened with ``O_NOFOLLOW`` and changed through the descriptor, so a link swapped in is never followed."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if not stat.S_ISREG(st.st_mode) or not st.st_mode & _OTHERS or st.st_uid != os.geteuid():
            return True  # another account's file is left alone, even when running as root
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
        try:
            now = os.fstat(fd)
            if stat.S_ISREG(now.st_mode):
                os.fchmod(fd, stat.S_IMODE(now.st_mode) & ~_OTHERS)
        finally:
            os.close(fd)
    except OSError as exc:
        log.debug("cannot make %s private: %s", name, exc)
        return False
    return True


def tighten(folders: Iterable[Path]) -> int:
    """Make every folder under ``folders`` 0700 and take the group/other bits off every regular file
    (0644 -> 0600, git's read-only 0444 -> 0400). Links are neither followed nor changed. Returns how many
    paths could not be changed (not ours, say)."""
    failed = 0
    for top in dict.fromkeys(folders):
        if _unsafe_top(top):
            continue
        for _folder, fd, files in _walk(top):
            try:
                st = os.fstat(fd)
                if stat.S_IMODE(st.st_mode) != DIR_MODE and st.st_uid == os.geteuid():
                    os.fchmod(fd, DIR_MODE)
            except OSError:
                failed += 1
            failed += sum(not _narrow(name, fd) for name in files)
    return failed


def exposed(folders: Iterable[Path], limit: int = 10) -> list[Path]:
    """Up to ``limit`` paths under ``folders`` (folders and regular files) that others can read or enter."""
    found: list[Path] = []
    for top in dict.fromkeys(folders):
        if _too_wide(top):
            continue
        for folder, fd, files in _walk(top):
            if os.fstat(fd).st_mode & _OTHERS:
                found.append(Path(folder))
            for name in files:
                with contextlib.suppress(OSError):
                    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                    if stat.S_ISREG(st.st_mode) and st.st_mode & _OTHERS:
                        found.append(Path(folder, name))
            if len(found) >= limit:
                return found[:limit]
    return found


def app_folders(where: Locations) -> list[Path]:
    """The folders that are ours alone (the config file named by ``SWEBASH_AI_CONFIG`` elsewhere is not)."""
    return [where.config_dir, where.data_dir, where.state_dir]


def _drop_old_snapshots(where: Locations) -> None:
    """Snapshot repositories from before undo skipped protected files may hold ``.env`` and keys: remove
    them (a hard link to a credential cannot be recognised after the fact, so no rewrite would be sure)."""
    import shutil

    store = where.sessions_dir / "snapshots.git"
    if store.is_symlink() or not store.is_dir() or (store / "info" / "guarded").exists():
        return
    shutil.rmtree(store)
    write_file(where.sessions_dir / SNAPSHOTS_CLEARED, f"{time.time():.3f}\n".encode())


def tighten_once(where: Locations) -> None:
    """Tighten an existing install the first time this version starts (afterwards: one ``stat``)."""
    marker = where.state_dir / MARKER
    if marker.exists():
        return
    try:
        _drop_old_snapshots(where)
        failed = tighten(app_folders(where))
        if failed:
            log.warning("%d path(s) in swebash-ai's folders could not be made private; see swebash-ai doctor",
                        failed)
        write_file(marker, b"")
    except OSError as exc:  # a read-only home: the app still runs; doctor reports what stays exposed
        log.warning("cannot make swebash-ai's folders private: %s", exc)
