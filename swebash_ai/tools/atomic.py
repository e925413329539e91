"""Writing a file atomically: a temporary file beside it, fsynced, then ``os.replace`` (or ``os.link`` when
it must not exist). A crash leaves the old content or the new, never half of either.

Used by the write tools (``fs_write.py``) and by undo, which puts contents back the same way
(``checkpoints.py``, ``snapshots.py``).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

__all__ = ["write_atomically"]


def _umask() -> int:
    with contextlib.suppress(OSError, ValueError, IndexError), open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)  # process-wide for an instant: only where /proc cannot tell
    os.umask(mask)
    return mask


def write_atomically(target: Path, data: bytes, *, mode: int | None = None, create_dirs: bool = True,
                     exclusive: bool = False) -> None:
    """Write ``data`` to ``target`` through a temporary file (fsynced) and ``os.replace``.

    ``mode``: the permission bits to give it; by default those it has (a new file: what the umask allows).
    ``exclusive``: never replace an existing file (``os.link`` fails if one appeared meanwhile).
    """
    parent = target.parent
    if not parent.is_dir():
        if not create_dirs:
            raise FileNotFoundError(f"the directory {parent} does not exist (create_dirs=false)")
        parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        try:
            mode = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            mode = 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(dir=parent, prefix=f".{target.name}.", suffix=".swebash-tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        if exclusive:
            os.link(tmp, target)
            os.unlink(tmp)
        else:
            os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
