"""``@shot.png``: an image mention is read through the guard of every mention (read_unasked_bytes): protected
files, links to them, FIFOs, files over the limit and files outside a project command's repository stay out."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from swebash_ai.agent import images
from swebash_ai.agent.mentions import expand_mentions, split_attachments
from swebash_ai.config.settings import load_settings
from swebash_ai.safety.paths import PathPolicy
from swebash_ai.tools.registry import ToolContext

from ._pictures import picture


@pytest.fixture
def ctx(workspace: Path, isolated_env: Path) -> ToolContext:
    home = isolated_env
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nCANARY\n")
    (home / ".ssh" / "qr.png").write_bytes(picture("PNG"))  # an image, but in a protected folder
    (workspace / "shot.png").write_bytes(picture("PNG", (200, 100)))
    return ToolContext(settings=load_settings().settings, cwd=workspace,
                       path_policy=PathPolicy(roots=[workspace], home=home))


def test_an_image_mention_attaches_the_image_and_names_it_in_the_text(ctx: ToolContext) -> None:
    got = expand_mentions("what is wrong here? @shot.png", ctx)
    assert got.notices == () and got.attachments == ()
    (image,) = got.images
    assert image.name == "shot.png" and (image.width, image.height) == (200, 100)
    assert image.data == (ctx.cwd / "shot.png").read_bytes()
    assert got.text == f"what is wrong here? @shot.png\n\n{image.header}"
    assert split_attachments(got.text) == ("what is wrong here? @shot.png", [image.line])  # a resumed chat's line


def test_a_protected_image_and_a_link_to_a_protected_file_are_refused(ctx: ToolContext, isolated_env: Path) -> None:
    home = isolated_env
    (ctx.cwd / "innocent.png").symlink_to(home / ".ssh" / "id_rsa")
    (ctx.cwd / "qr.png").symlink_to(home / ".ssh" / "qr.png")
    got = expand_mentions("look: @~/.ssh/qr.png @innocent.png @qr.png", ctx)
    assert got.images == () and len(got.notices) == 3
    assert all("is not attached" in n for n in got.notices)
    assert "leads to" in got.notices[1] and "id_rsa" in got.notices[1]
    assert "CANARY" not in got.text


def test_a_fifo_named_like_an_image_is_refused_without_blocking(ctx: ToolContext) -> None:
    os.mkfifo(ctx.cwd / "pipe.png")
    got = expand_mentions("@pipe.png", ctx)
    assert got.images == () and "it is a FIFO" in got.notices[0]


def test_an_image_over_the_file_limit_is_refused_whole(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(images, "MAX_IMAGE_FILE", 1000)
    (ctx.cwd / "big.png").write_bytes(picture("PNG", (400, 400), noise=True))
    got = expand_mentions("@big.png", ctx)
    assert got.images == () and "larger than 1000 bytes" in got.notices[0]


def test_a_file_named_png_that_is_no_image_is_refused(ctx: ToolContext) -> None:
    (ctx.cwd / "notes.png").write_text("just text\n")
    got = expand_mentions("@notes.png", ctx)
    assert got.images == () and "not a PNG, JPEG, GIF or WebP image" in got.notices[0]


def test_a_project_commands_text_may_only_mention_images_inside_the_project(
    ctx: ToolContext, isolated_env: Path
) -> None:
    (isolated_env / "holiday.png").write_bytes(picture("PNG"))
    got = expand_mentions("@~/holiday.png @shot.png", ctx, within=[ctx.cwd])
    assert [i.name for i in got.images] == ["shot.png"]
    assert "outside" in got.notices[0]
