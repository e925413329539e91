"""The app keeps glibc from fragmenting its heap with large transient buffers (see ``garbage.pin_mmap_threshold``)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from tui_helpers import idle

from swebash_ai.frontends.tui import app as app_module
from swebash_ai.frontends.tui import garbage

glibc = pytest.mark.skipif(garbage._glibc() is None, reason="mallopt and malloc_trim are glibc's")


_CHECK = """
import ctypes
from swebash_ai.frontends.tui import garbage

class MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                               "fsmblks", "uordblks", "fordblks", "keepcost")]

libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = MallInfo2

def mapped():  # bytes glibc holds in blocks mapped on their own
    return int(libc.mallinfo2().hblkhd)

size = 4 * 1024 * 1024
assert garbage.pin_mmap_threshold()
for _ in range(3):
    before = mapped()
    block = bytearray(size)
    assert mapped() - before >= size, "not mapped on its own"
    del block
    assert mapped() - before < size, "not given back when freed"
garbage.release_free_memory()  # and the trim runs (nothing to assert about the system's pages)
print("ok")
"""


@glibc
def test_a_large_buffer_freed_does_not_send_the_next_one_to_the_heap() -> None:
    """Unpinned, glibc raises its threshold when a mapped block is freed, and the next block of that size comes
    from the heap (where, freed, it leaves a hole that small long-lived objects pin). Pinned, every large block
    is mapped, and unmapped when freed. Checked in a fresh interpreter: a long-lived process's heap may hold a
    free stretch that large at its top, and glibc serves any size from there before it maps anything."""
    done = subprocess.run([sys.executable, "-c", _CHECK], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr


async def test_the_app_pins_the_threshold_when_it_starts(make_app, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[None] = []
    monkeypatch.setattr(app_module, "pin_mmap_threshold", lambda: calls.append(None) or True)
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await idle(pilot)
        assert calls == [None]
