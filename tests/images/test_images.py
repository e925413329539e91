"""Images by their bytes: the type, the size from the header, the provider's limits, downscaling with Pillow or a
clear refusal without it, and the pixel bomb refused before any decoding."""

from __future__ import annotations

import io
import sys

import pytest
from PIL import Image

from swebash_ai.agent.images import (
    MAX_PIXELS,
    ImageAttachment,
    ImageRefusal,
    dimensions,
    image_attachment,
    limits_for,
    sniff,
)

from ._pictures import picture, png_header_only


@pytest.mark.parametrize(("kind", "mime"), [("PNG", "image/png"), ("JPEG", "image/jpeg"), ("GIF", "image/gif"),
                                            ("WEBP", "image/webp")])
def test_the_type_and_size_come_from_the_bytes(kind: str, mime: str) -> None:
    data = picture(kind, (321, 123))
    assert sniff(data) == mime
    assert dimensions(data, mime) == (321, 123)  # read from the header, without Pillow


def test_lossless_webp_and_extended_webp_headers_are_read_too() -> None:
    for options in ({"lossless": True}, {"lossless": True, "exif": b"Exif\x00\x00"}):
        buffer = io.BytesIO()
        Image.new("RGBA", (77, 33), (1, 2, 3, 4)).save(buffer, "WEBP", **options)
        assert dimensions(buffer.getvalue(), "image/webp") == (77, 33)


def test_a_webp_fragment_too_short_to_hold_a_size_is_not_an_image() -> None:
    fragment = b"RIFF\x0c\x00\x00\x00WEBPVP8X"  # 20 bytes: read as 1x1 before
    assert dimensions(fragment, "image/webp") is None
    assert not isinstance(image_attachment(fragment, "image/webp", name="x.webp"), ImageAttachment)


def test_an_image_within_the_limits_goes_out_byte_for_byte() -> None:
    data = picture("PNG", (800, 600))
    got = image_attachment(data, "image/png", name="shot.png")
    assert isinstance(got, ImageAttachment)
    assert got.data == data and (got.width, got.height) == (800, 600) and got.original is None
    assert got.data_url().startswith("data:image/png;base64,iVBORw0KGgo")
    assert got.header == f"[Attached by the user: shot.png ({got.summary})]"
    assert got.reference() == {"name": "shot.png", "mime": "image/png", "sha256": got.sha256, "width": 800,
                               "height": 600, "bytes": len(data)}


def test_the_claimed_type_never_wins_over_the_bytes() -> None:
    got = image_attachment(picture("JPEG"), "image/png", name="clip")
    assert isinstance(got, ImageAttachment) and got.mime == "image/jpeg"
    refused = image_attachment(b"#!/bin/sh\necho hi\n", "image/png", name="evil.png")
    assert isinstance(refused, ImageRefusal)
    assert refused.notice == ("evil.png is not attached: it is not a PNG, JPEG, GIF or WebP image "
                              "(said to be image/png).")


@pytest.mark.parametrize(("model", "side"), [("anthropic/claude-sonnet-4-5", 1568), ("gemini/gemini-2.5-flash", 3072),
                                             ("openai/gpt-4.1", 2048), ("ollama_chat/llava", 2048)])
def test_an_image_over_the_providers_side_is_downscaled_to_it(model: str, side: int) -> None:
    data = picture("PNG", (4000, 2500))
    got = image_attachment(data, name="big.png", limits=limits_for(model))
    assert isinstance(got, ImageAttachment)
    assert max(got.width, got.height) == side and got.original == (4000, 2500)
    assert got.width / got.height == pytest.approx(1.6, rel=0.01)  # the proportions kept
    assert dimensions(got.data, got.mime) == (got.width, got.height)  # what is sent is what it says
    assert "downscaled from 4000×2500" in got.summary


def test_a_photo_too_heavy_as_png_goes_out_as_jpeg_under_the_byte_limit() -> None:
    data = picture("PNG", (1500, 1500), noise=True)  # random pixels: ~6.7 MB as PNG, over Anthropic's 3.75 MB
    limits = limits_for("anthropic/claude-sonnet-4-5")
    assert len(data) > limits.max_bytes
    got = image_attachment(data, name="photo.png", limits=limits)
    assert isinstance(got, ImageAttachment)
    assert got.mime == "image/jpeg" and len(got.data) <= limits.max_bytes and sniff(got.data) == "image/jpeg"


def test_without_pillow_a_large_image_is_refused_saying_why(monkeypatch: pytest.MonkeyPatch) -> None:
    small_png, big_png = picture("PNG", (640, 480)), picture("PNG", (3000, 2000))
    monkeypatch.setitem(sys.modules, "PIL", None)  # "not installed"
    small = image_attachment(small_png, name="small.png")
    assert isinstance(small, ImageAttachment)  # within the limits, Pillow is never needed
    got = image_attachment(big_png, name="big.png")
    assert isinstance(got, ImageRefusal)
    assert "3000×2000" in got.reason and "Pillow" in got.reason and "pip install pillow" in got.reason


def test_a_pixel_bomb_is_refused_from_its_header_before_any_decoding(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "PIL", None)  # it never gets as far as Pillow
    got = image_attachment(png_header_only(60_000, 60_000), name="bomb.png")
    assert isinstance(got, ImageRefusal) and "60000×60000" in got.reason
    assert MAX_PIXELS < 60_000 * 60_000


def test_a_broken_header_is_refused() -> None:
    got = image_attachment(b"\x89PNG\r\n\x1a\n" + b"\x00" * 10, name="cut.png")
    assert isinstance(got, ImageRefusal) and "header" in got.reason


def test_a_rotated_photo_is_downscaled_upright() -> None:
    exif = Image.Exif()
    exif[0x0112] = 6  # orientation: the camera was turned; a viewer rotates the picture 90 degrees
    buffer = io.BytesIO()
    Image.new("RGB", (4000, 3000), (10, 200, 10)).save(buffer, "JPEG", exif=exif.tobytes())
    got = image_attachment(buffer.getvalue(), name="photo.jpg", limits=limits_for("openai/gpt-4.1"))
    assert isinstance(got, ImageAttachment)
    assert (got.width, got.height) == (1536, 2048)  # portrait, as the viewer shows it
