"""Images attached to a question: recognised by their bytes, measured, downscaled to what the provider takes.

Contract:
    :func:`image_attachment` turns an image's bytes (and the mime type a caller claims, if any) into an
    :class:`ImageAttachment` the conversation sends as an OpenAI ``image_url`` content part (litellm turns it
    into Anthropic's ``image`` block and Gemini's ``inline_data``), or an :class:`ImageRefusal` saying why
    not, for a person. Every way in goes through it: an ``@shot.png`` mention (read by
    :func:`~swebash_ai.safety.unasked.read_unasked_bytes`, the guard of every mention), an image piped to
    ``swebash-ai -c``, the TUI's clipboard, and the ACP front end's image blocks. It never raises for the
    image.

    The format is what the bytes say (PNG, JPEG, GIF, WebP by their magic numbers), never the name or the
    claimed type. The size in pixels is read from the header with the standard library; an image within the
    provider's limits (:func:`limits_for`) is sent as it is, byte for byte. A larger one is downscaled with
    Pillow, imported only then; without Pillow it is refused with a message that says so. An image of more
    than :data:`MAX_PIXELS` is refused before any decoding (a small file can claim a huge canvas).

Why:
    Providers refuse an image over their limits with an error after the upload (Anthropic: 5 MB, and it
    rescales anything over about 1568 pixels a side anyway); a screenshot of a large screen passes neither.
    Downscaling before the request costs nothing the model would have seen.
"""

from __future__ import annotations

import base64
import hashlib
import io
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from swebash_ai.errors import ImageInputError
from swebash_ai.storage.sizes import human_size

__all__ = ["IMAGE_SUFFIXES", "MAX_IMAGE_FILE", "MAX_PIXELS", "ImageAttachment", "ImageLimits", "ImageRefusal",
           "dimensions", "image_attachment", "image_tokens", "is_image_name", "limits_for", "refused_for", "sniff"]

MIME_SUFFIX = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}
"""The formats every provider with image input takes, and the suffix an attachment is stored under."""
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")
"""A mention of a file with one of these names is read as an image."""
MAX_IMAGE_FILE = 20 * 1024 * 1024
"""Largest image file read (a mention, piped input, the clipboard): a screenshot is a few MB at most."""
MAX_PIXELS = 50_000_000
"""Largest canvas decoded (a 48-megapixel photo fits): its header is read first, so a bomb is never decoded."""


@dataclass(frozen=True)
class ImageLimits:
    """What one provider takes for one image: the longest side in pixels and the encoded size."""

    provider: str
    max_side: int
    max_bytes: int


# Anthropic: 5 MB of base64 a picture (3.75 MB of image), rescaled past 1568 px a side. OpenAI: 20 MB, high detail
# fits 2048 px. Gemini: 20 MB the whole inline request, 3072 px. The byte limits leave room for base64 (4/3).
_ANTHROPIC = ImageLimits("Anthropic", 1568, 3_750_000)
_GEMINI = ImageLimits("Gemini", 3072, 14_000_000)
_OPENAI = ImageLimits("OpenAI", 2048, 14_000_000)


def limits_for(model: str) -> ImageLimits:
    """The limits of the provider behind ``model`` (litellm's ``provider/name``); OpenAI's for the rest."""
    name = model.lower()
    if name.startswith(("anthropic/", "bedrock/")) or "claude" in name:
        return _ANTHROPIC
    if name.startswith(("gemini/", "vertex_ai/")) or "gemini" in name:
        return _GEMINI
    return _OPENAI


@dataclass(frozen=True)
class ImageAttachment:
    """An image ready to send: its bytes as sent (downscaled when needed), what it is and where it came from."""

    name: str
    """The path as typed, or where it came from (``clipboard``, ``stdin``)."""
    mime: str
    data: bytes
    width: int
    height: int
    original: tuple[int, int] | None = None
    """The size in pixels before it was downscaled; ``None``: sent as it came."""

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def summary(self) -> str:
        kind = MIME_SUFFIX[self.mime].upper().replace("JPG", "JPEG")
        shrunk = f", downscaled from {self.original[0]}×{self.original[1]}" if self.original else ""
        return f"image, {kind}, {self.width}×{self.height}, {human_size(len(self.data))}{shrunk}"

    @property
    def header(self) -> str:
        """The line the message text carries for it (the model reads which image is which)."""
        return f"[Attached by the user: {self.name} ({self.summary})]"

    @property
    def line(self) -> str:
        """The compact line a front end shows."""
        return f"🖼 {self.name} ({self.summary})"

    def data_url(self) -> str:
        return f"data:{self.mime};base64,{base64.b64encode(self.data).decode('ascii')}"

    def reference(self) -> dict[str, Any]:
        """What a saved message keeps: the image is stored once, apart, under its hash."""
        ref: dict[str, Any] = {"name": self.name, "mime": self.mime, "sha256": self.sha256, "width": self.width,
                               "height": self.height, "bytes": len(self.data)}
        if self.original:
            ref["downscaled_from"] = list(self.original)
        return ref


@dataclass(frozen=True)
class ImageRefusal:
    """An image left out, and why (one line for the user)."""

    name: str
    reason: str

    @property
    def notice(self) -> str:
        return f"{self.name} is not attached: {self.reason}."


def is_image_name(path: str) -> bool:
    return path.lower().endswith(IMAGE_SUFFIXES)


def sniff(data: bytes) -> str | None:
    """The image type the bytes are, by their magic numbers; ``None`` for anything else."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def dimensions(data: bytes, mime: str) -> tuple[int, int] | None:
    """Width and height from the header (standard library only); ``None`` when the header is not readable."""
    try:
        if mime == "image/png" and data[12:16] == b"IHDR":
            width, height = struct.unpack(">II", data[16:24])
            return _sane(width, height)
        if mime == "image/gif":
            width, height = struct.unpack("<HH", data[6:10])
            return _sane(width, height)
        if mime == "image/webp":
            return _webp_size(data)
        if mime == "image/jpeg":
            return _jpeg_size(data)
    except struct.error:
        return None
    return None


def _sane(width: int, height: int) -> tuple[int, int] | None:
    return (width, height) if width > 0 and height > 0 else None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    if len(data) < 30:  # shorter than any header that holds a size: a fragment, not an image
        return None
    chunk = data[12:16]
    if chunk == b"VP8 " and data[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", data[26:30])
        return _sane(width & 0x3FFF, height & 0x3FFF)
    if chunk == b"VP8L" and data[20:21] == b"\x2f":
        bits = int.from_bytes(data[21:25], "little")
        return _sane(1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF))
    if chunk == b"VP8X":
        return _sane(1 + int.from_bytes(data[24:27], "little"), 1 + int.from_bytes(data[27:30], "little"))
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    at = 2
    while at + 4 <= len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # markers without a length
            at += 2
            continue
        (length,) = struct.unpack(">H", data[at + 2 : at + 4])
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):  # a start of frame
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return _sane(width, height)
        at += 2 + length
    return None


def image_attachment(data: bytes, mime: str | None = None, *, name: str = "image",
                     limits: ImageLimits = _OPENAI) -> ImageAttachment | ImageRefusal:
    """An image's bytes made into what is sent (see the module docstring).

    Args:
        data: The image file's bytes, whole.
        mime: The type the source claims (an ACP block, a clipboard): only checked against the bytes.
        name: How the user knows it (the path as typed, ``clipboard``, ``stdin``).
        limits: The provider's limits (:func:`limits_for` of the session's model).
    """
    if len(data) > MAX_IMAGE_FILE:
        return ImageRefusal(name, f"it is larger than {human_size(MAX_IMAGE_FILE)}")
    found = sniff(data)
    if found is None:
        claimed = f" (said to be {mime})" if mime else ""
        return ImageRefusal(name, f"it is not a PNG, JPEG, GIF or WebP image{claimed}")
    size = dimensions(data, found)
    if size is None:
        return ImageRefusal(name, f"its {MIME_SUFFIX[found].upper()} header cannot be read")
    width, height = size
    if width * height > MAX_PIXELS:
        return ImageRefusal(name, f"it is {width}×{height} pixels, more than the {MAX_PIXELS // 1_000_000} "
                                  "megapixels an image may have here")
    if max(width, height) <= limits.max_side and len(data) <= limits.max_bytes:
        return ImageAttachment(name, found, data, width, height)
    return _downscaled(data, found, name, size, limits)


def _downscaled(data: bytes, mime: str, name: str, size: tuple[int, int],
                limits: ImageLimits) -> ImageAttachment | ImageRefusal:
    over = (f"it is {size[0]}×{size[1]} pixels and {human_size(len(data))}, over {limits.provider}'s "
            f"{limits.max_side} pixels a side or {human_size(limits.max_bytes)}")
    try:
        from PIL import Image, ImageOps  # a few MB of C extension: loaded for an image to downscale, never before
    except ImportError:
        return ImageRefusal(name, f"{over}, and Pillow (which downscales it) is not installed: "
                                  "pip install pillow, or attach a smaller image")
    try:
        with Image.open(io.BytesIO(data)) as opened:
            picture = opened.convert("RGBA") if opened.mode in ("P", "PA", "LA", "I", "I;16", "F") else opened.copy()
            picture = ImageOps.exif_transpose(picture)  # a phone photo upright: its EXIF turn is lost on re-encoding
        picture.thumbnail((limits.max_side, limits.max_side), Image.Resampling.LANCZOS)
        # GIF goes out as PNG: its palette would band a downscaled screenshot, and only the first frame is kept
        kept = "image/png" if mime == "image/gif" else mime
        out = _encode(picture, kept)
        if len(out) > limits.max_bytes:  # a photo saved as PNG: JPEG, at falling quality
            kept = "image/jpeg"
            for quality in (85, 70, 50):
                out = _encode(picture, kept, quality)
                if len(out) <= limits.max_bytes:
                    break
    except (OSError, ValueError, Image.DecompressionBombError) as exc:
        return ImageRefusal(name, f"{over}, and it cannot be decoded to downscale it ({exc})")
    if len(out) > limits.max_bytes:
        return ImageRefusal(name, f"{over}, even downscaled")
    return ImageAttachment(name, kept, out, picture.width, picture.height, size)


def _encode(picture: Any, mime: str, quality: int = 85) -> bytes:
    buffer = io.BytesIO()
    if mime == "image/jpeg":
        if picture.mode != "RGB":  # JPEG has no alpha: flatten onto white, as a viewer shows it
            from PIL import Image

            flat = Image.new("RGB", picture.size, (255, 255, 255))
            rgba = picture.convert("RGBA")
            flat.paste(rgba, mask=rgba.getchannel("A"))
            picture = flat
        picture.save(buffer, "JPEG", quality=quality, optimize=True)
    elif mime == "image/webp":
        picture.save(buffer, "WEBP", quality=quality)
    else:
        picture.save(buffer, "PNG")  # optimize=True: 4x the time (240 ms for a 4K screenshot) for 2% less
    return buffer.getvalue()


def image_tokens(width: int, height: int) -> int:
    """About what an image costs in prompt tokens (Anthropic's rule, pixels / 750; the others are close)."""
    return max(85, min(width * height // 750, 6000))


def refused_for(model: str, images: Sequence[ImageAttachment]) -> ImageInputError | None:
    """The error for images attached to a model that litellm's bundled model data says takes none (read without
    importing litellm, see :func:`~swebash_ai.providers.pricing.supports_vision`); ``None`` when it takes them
    or is not listed (then the provider decides, and a refusal is an :class:`ImageInputError` too)."""
    from swebash_ai.providers.pricing import supports_vision

    if not images or supports_vision(model) is not False:
        return None
    names = ", ".join(image.name for image in images)
    return ImageInputError(
        f"{model} takes no images, as litellm's model data says: nothing was sent ({names} and the question).",
        hint="Switch to a model that takes images (/model, or SWEBASH_AI_MODEL), or ask without the image.",
    )
