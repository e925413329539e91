"""Real image files for the image tests, made with Pillow (PNG, JPEG, GIF, WebP) or by hand (a PNG header)."""

from __future__ import annotations

import io
import struct
import zlib

from PIL import Image


def picture(kind: str = "PNG", size: tuple[int, int] = (64, 48), *, noise: bool = False) -> bytes:
    """An image of ``size`` in format ``kind``; ``noise``: random pixels (a photo's size, not a flat colour's)."""
    if noise:
        import os

        image = Image.frombytes("RGB", size, os.urandom(size[0] * size[1] * 3))
    else:
        image = Image.new("RGB", size, (200, 30, 30))
        image.putpixel((0, 0), (0, 0, 255))
    buffer = io.BytesIO()
    image.save(buffer, kind)
    return buffer.getvalue()


def png_header_only(width: int, height: int) -> bytes:
    """The first bytes of a PNG claiming ``width`` x ``height`` (its pixels never follow): a bomb's header."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = struct.pack(">I", len(ihdr)) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    return b"\x89PNG\r\n\x1a\n" + chunk
