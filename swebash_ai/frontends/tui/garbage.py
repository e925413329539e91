"""The app's garbage-collection policy: start-up frozen, full collections held while it runs, done when idle;
and glibc's heap kept from fragmenting (large buffers mapped on their own, free pages given back when idle).

Kept out of ``app.py`` so the controller, which schedules the idle collection after each turn, needs
nothing from the app module (the dependency runs app -> controller only).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ctypes

    from textual.app import App


def settle_memory() -> None:
    """Move every object alive now out of the collector's sight (``gc.freeze``).

    The app holds hundreds of thousands of long-lived objects (the provider library, pydantic models,
    widgets of past answers); a full collection that scans them all stalls the UI for a few hundred
    milliseconds in the middle of a stream. Called after start-up and after each turn, it keeps full
    collections down to what the current turn created.
    """
    gc.freeze()


FULL_COLLECTION_HOLD = 1_000_000
"""The collector's third threshold while the app runs: no automatic full collection (see below)."""


@contextlib.contextmanager
def full_collections_held() -> Iterator[None]:
    """No automatic full garbage collection inside the block (see :func:`collect_garbage`); the app holds
    them while it runs. Holds nest: each restores the threshold it found.

    Even with start-up frozen, a long streamed reply creates enough long-lived objects (its widgets,
    their render caches) that the collector's full passes come back every few seconds and each stops
    both threads for 50-170 ms (measured): the worst keypress delays of a fast stream. Held only during
    turns, one still fell at the start of the next turn. Held off, that work is done once a turn has
    ended and the user is reading (see ``Controller.collect_when_idle``).
    """
    first, second, third = gc.get_threshold()
    gc.set_threshold(first, second, FULL_COLLECTION_HOLD)
    try:
        yield
    finally:
        gc.set_threshold(*gc.get_threshold()[:2], third)


MMAP_THRESHOLD = 128 * 1024
"""Bytes from which glibc's ``malloc`` maps a block of its own, given back to the system when freed (see
:func:`pin_mmap_threshold`)."""
_M_MMAP_THRESHOLD = -3  # mallopt's parameter, from glibc's malloc.h


def _glibc() -> ctypes.CDLL | None:
    """The C library when it is glibc (``mallopt`` and ``malloc_trim`` are glibc's), else ``None``."""
    import ctypes
    import sys

    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:  # musl and others: no such file
        return None
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None


def pin_mmap_threshold() -> bool:
    """Keep glibc's threshold for mapped blocks at :data:`MMAP_THRESHOLD` (its start-up value); returns whether it
    could (glibc only).

    glibc raises the threshold each time a mapped block is freed (up to 32 MB), so after the first request body
    of a long conversation (the whole conversation as JSON, a few MB) every later one is carved from the heap
    instead. Freed, it leaves holes that the turn's small long-lived allocations (a tool's result, an answer's
    text) settle into, and the heap can no longer shrink: over 130 turns of a session, the free heap glibc
    kept grew by 4.7 MB (``bench/tui_memory_where.py``: "free but kept"), about half of what the session
    grew by. Pinned, large transient buffers are mapped and unmapped and never fragment the heap.
    """
    libc = _glibc()
    return bool(libc is not None and libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))


def release_free_memory() -> None:
    """Give the free pages of glibc's heaps back to the system (``malloc_trim``); nothing elsewhere."""
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)


def collect_garbage() -> None:
    """One full collection, then :func:`settle_memory`."""
    gc.collect()
    settle_memory()


def release_render_caches() -> None:
    """Let go of the rendered lines of widgets that are gone; called at the end of each turn.

    Textual caches ``StylesCache.get_inner_outer`` with ``functools.lru_cache`` on the method, so its key holds
    the widget's styles cache itself, and with it every line the widget last drew: up to 1,024 of them,
    from widgets long removed (messages stored as blueprints, tool entries put behind the "earlier" line).
    A 300-turn session kept some 90 MB so (``bench/tui_session_memory.py``). The entry is two background
    styles, made again at once.
    """
    from textual._styles_cache import StylesCache

    clear = getattr(StylesCache.get_inner_outer, "cache_clear", None)  # a later Textual may not cache it so
    if clear is not None:
        clear()


def release_text_caches(app: App[object]) -> None:
    """Empty the caches that fill with the session's texts; called at the end of each turn.

    They are bounded, but each turn adds keys that never come back, and a long session fills them to the
    bound, as memory that grows with it for hundreds of turns: Rich's ``cached_cell_len`` (4,096 strings of
    up to 511 characters: every status line, question and word measured, ~13 a turn, about 1 MB once full)
    and Textual's ``query_one`` cache on each node (1,024 keys holding the count of mounts when they were
    made, so none is found again after the next mount). Each widget's line cache (``StylesCache``) goes too:
    it keeps every line the widget drew, and each line its crops and divisions, every ``Strip`` with seven
    caches of its own (~1 KB each): at the end of a 300-turn session 4,100 lived, 2,200 with this
    (``bench/tui_memory_where.py``). So do the box models each widget keeps (16, keyed on its count of layout
    updates, so none is found again after the next layout). What the next frame needs is made again at once.
    """
    from rich.cells import cached_cell_len

    cached_cell_len.cache_clear()
    for node in (app, *(node for screen in app.screen_stack for node in (screen, *screen.walk_children()))):
        cache = getattr(node, "_query_one_cache", None)  # a later Textual may not have it
        if cache is not None:
            cache.clear()
        lines = getattr(node, "_styles_cache", None)
        if lines is not None:
            lines.clear()
        boxes = getattr(node, "_box_model_cache", None)  # keyed on a counter of layout updates: stale at once
        if boxes is not None:
            boxes.clear()


def collect_everything() -> None:
    """A full collection of every object, frozen ones included; then :func:`settle_memory` again.

    Objects frozen after a turn that become garbage later (widgets removed from the screen: tool entries
    put back behind the "earlier calls" line, a reply's plain-text tail) are never freed by
    :func:`collect_garbage`, whose collection skips frozen objects: a long session grew by ~0.7 MB a turn
    (``bench/tui_resume_session.py``), ~0.1 MB with this run now and then. It scans the whole heap (0.3-0.9 s
    with a 1,000-message session), so the app runs it only after several turns, when no key has come for
    a while (see ``Controller.collect_everything_when_quiet``).
    """
    gc.unfreeze()
    gc.collect()
    release_free_memory()
    settle_memory()
