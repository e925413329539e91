"""The temporary files of atomic writes: named so they are known for ours, and none left behind by a crash.

Contract:
    :func:`temporary_name` gives the name of a write's temporary file (``.NAME.XXXXXXXX.swebash-tmp`` beside
    the target); :func:`is_temporary` knows such a name, so that search, find, snapshots and path completion
    never take one for the user's file. :func:`noted` records the temporary file of a write in progress in
    the journal (``pending-writes/`` in the state folder) for as long as the write lasts. An exception or a
    Ctrl-C removes the file on the way out (:func:`~swebash_ai.storage.private_files.replace_atomically`); a
    kill cannot, so :func:`sweep`, at the next start, removes the temporary files of writes whose process is
    gone, and says which.

Why a journal and not a walk: the next start may be in another folder, and walking a workspace to look for
leftovers costs as much as the workspace is big. The journal holds one small file per write in progress
(none, at rest): reading it costs one ``listdir``.

The journal is best effort: a write never fails because its note could not be made (a read-only home).
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

from swebash_ai.storage.locations import locations

__all__ = ["SUFFIX", "is_temporary", "noted", "sweep", "temporary_name"]

log = logging.getLogger(__name__)

SUFFIX = ".swebash-tmp"
_DIR_MODE, _FILE_MODE = 0o700, 0o600


def temporary_name(target: Path) -> Path:
    """A new temporary name beside ``target`` (hidden, random, with our suffix)."""
    return target.with_name(f".{target.name}.{secrets.token_hex(4)}{SUFFIX}")


def is_temporary(name: str) -> bool:
    """Is this file name (the last component) one of our writes' temporary files?"""
    return name.endswith(SUFFIX) and name.startswith(".")


def journal() -> Path:
    return locations().state_dir / "pending-writes"


@contextlib.contextmanager
def noted(tmp: Path) -> Iterator[None]:
    """Record ``tmp`` in the journal while the block runs (the block creates and removes or renames it)."""
    entry = _note(tmp)
    try:
        yield
    finally:
        if entry is not None:
            with contextlib.suppress(OSError):
                os.unlink(entry)


def _note(tmp: Path) -> Path | None:
    folder = journal()
    entry = folder / f"{os.getpid()}-{secrets.token_hex(6)}"
    data = os.fsencode(os.path.abspath(tmp))
    for attempt in range(2):
        try:
            fd = os.open(entry, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, _FILE_MODE)
        except FileNotFoundError:
            if attempt:
                return None
            with contextlib.suppress(OSError):
                _make_private(folder)
            continue
        except OSError as exc:
            log.debug("no journal entry for %s: %s", tmp, exc)
            return None
        try:
            os.write(fd, data)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(entry)
            return None
        finally:
            os.close(fd)
        return entry
    return None


def _make_private(folder: Path) -> None:
    """``folder`` and its missing parents, each 0700 (as ``private_files.make_dirs``, which imports this)."""
    missing = []
    for part in (folder, *folder.parents):
        if part.is_dir():
            break
        missing.append(part)
    for part in reversed(missing):
        with contextlib.suppress(FileExistsError):
            part.mkdir(_DIR_MODE)
            os.chmod(part, _DIR_MODE)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def sweep() -> list[Path]:
    """Remove the temporary files that writes of processes now gone left behind; the paths removed.

    Entries of a live process (another swebash-ai running now) are left alone. Only a regular file with our
    suffix is removed, never what a link points to.
    """
    folder = journal()
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    removed: list[Path] = []
    for name in names:
        pid_text = name.split("-", 1)[0]
        if not pid_text.isdigit() or _alive(int(pid_text)):
            continue
        entry = folder / name
        try:
            tmp = Path(os.fsdecode(entry.read_bytes()))
        except OSError:
            continue
        try:
            st = os.lstat(tmp)
            if is_temporary(tmp.name) and stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid():
                os.unlink(tmp)
                removed.append(tmp)
        except OSError:
            pass  # already gone (the write had finished, or someone removed it)
        with contextlib.suppress(OSError):
            os.unlink(entry)
    return removed
