"""Writing a workspace file atomically, keeping its mode (or the umask's for a new one): the write itself is
:func:`swebash_ai.storage.private_files.replace_atomically`, the one atomic write of the project.

Used by the write tools (``fs_write.py``) and by undo, which puts contents back the same way
(``checkpoints.py``, ``snapshots.py``).
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from swebash_ai.storage.private_files import replace_atomically

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
    replace_atomically(target, data, mode, exclusive=exclusive)
