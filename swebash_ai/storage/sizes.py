"""A size in bytes as people read it (``512 B``, ``3.4 KiB``, ``1.2 MiB``): one wording for every message."""

from __future__ import annotations

__all__ = ["human_size"]


def human_size(size: int) -> str:
    """``size`` bytes in B, KiB, MiB or GiB, one decimal past bytes."""
    if size < 1024:
        return f"{size} B"
    value, unit = float(size) / 1024, "KiB"
    for bigger in ("MiB", "GiB"):
        if value >= 1024:
            value, unit = value / 1024, bigger
    return f"{value:.1f} {unit}"
