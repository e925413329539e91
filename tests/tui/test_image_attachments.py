"""Images in the TUI: a path pasted (a file dropped) on the prompt or Ctrl+V with an image on the clipboard makes
a chip above the prompt; a chip is removed by a click or Backspace in the empty prompt; the next message takes the
chips to the model (the loopback server shows the image parts). A protected file pasted makes no chip."""

from __future__ import annotations

import base64
import os
import stat
from pathlib import Path

import pytest
from textual import events
from tui_helpers import idle, type_and_send, wait_for

from swebash_ai.frontends.tui.widgets.attachments import AttachmentChip, pasted_image_path
from swebash_ai.frontends.tui.widgets.chat import NoticeMessage
from swebash_ai.testing.fake_server import FakeLLMServer, Reply
from tests.images._pictures import picture


def _chips(app: object) -> list[str]:
    return [chip.image.name for chip in app.query(AttachmentChip)]  # type: ignore[attr-defined]


def _notices(app: object) -> list[str]:
    return [str(w.render()) for w in app.chat.messages() if isinstance(w, NoticeMessage)]  # type: ignore[attr-defined]


def test_what_counts_as_a_pasted_image_path(workspace: Path) -> None:
    (workspace / "my shot.png").write_bytes(picture())
    (workspace / "notes.txt").write_text("x")
    full = str(workspace / "my shot.png")
    assert pasted_image_path(f"'{full}' ", workspace) == full  # GNOME Terminal quotes a dropped file
    assert pasted_image_path(full.replace(" ", "\\ "), workspace) == full  # others escape the space
    assert pasted_image_path("file://" + full.replace(" ", "%20"), workspace) == full  # or give a URI
    assert pasted_image_path("my shot.png", workspace) == "my shot.png"  # relative to the session's folder
    assert pasted_image_path("missing.png", workspace) is None  # text, as typed
    assert pasted_image_path("notes.txt", workspace) is None
    assert pasted_image_path(f"{full}\n{full}", workspace) is None  # more than one line: text


async def test_a_pasted_path_becomes_a_chip_and_goes_with_the_message(
    llm_env: FakeLLMServer, make_app, workspace: Path
) -> None:
    data = picture("PNG", (90, 60))
    (workspace / "shot.png").write_bytes(data)
    llm_env.enqueue(Reply.text("A red box."))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        app.prompt.post_message(events.Paste(str(workspace / "shot.png")))
        await wait_for(pilot, lambda: _chips(app) == [str(workspace / "shot.png")], what="the chip")
        assert app.prompt.text == ""  # the path is attached, not typed
        assert app.query_one("#attachments").display
        await type_and_send(pilot, "what is this?")
        await wait_for(pilot, lambda: llm_env.requests and not app.busy, what="the turn")
        text, image = llm_env.requests[0]["body"]["messages"][-1]["content"]
        assert text["text"].startswith("what is this?\n\n[Attached by the user: ")
        assert image["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(data).decode()
        assert _chips(app) == [] and not app.query_one("#attachments").display
        assert any("(image, PNG, 90×60" in n for n in _notices(app))


async def test_a_chip_is_removed_by_a_click_or_backspace_in_the_empty_prompt(
    llm_env: FakeLLMServer, make_app, workspace: Path
) -> None:
    for name in ("a.png", "b.png"):
        (workspace / name).write_bytes(picture("PNG", (10 + len(name), 10)) + name.encode())
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        app.prompt.post_message(events.Paste("a.png"))
        await wait_for(pilot, lambda: _chips(app) == ["a.png"], what="a chip")
        app.prompt.post_message(events.Paste("b.png"))
        await wait_for(pilot, lambda: _chips(app) == ["a.png", "b.png"], what="two chips")
        await pilot.click(app.query(AttachmentChip).first())
        await wait_for(pilot, lambda: _chips(app) == ["b.png"], what="a removed")
        app.prompt.focus()
        await pilot.press("backspace")
        await wait_for(pilot, lambda: _chips(app) == [], what="b removed")
        assert llm_env.requests == []


async def test_a_pasted_protected_file_makes_no_chip(llm_env: FakeLLMServer, make_app, workspace: Path,
                                                     isolated_env: Path) -> None:
    (isolated_env / ".ssh").mkdir()
    (isolated_env / ".ssh" / "id_rsa").write_text("KEY\n")
    (workspace / "cute.png").symlink_to(isolated_env / ".ssh" / "id_rsa")
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        shown: list[str] = []
        app.notify = lambda message, **kw: shown.append(str(message))  # type: ignore[method-assign]
        app.prompt.post_message(events.Paste("cute.png"))
        await wait_for(pilot, lambda: bool(shown), what="the refusal")
        assert "cute.png is not attached" in shown[0] and "id_rsa" in shown[0]
        assert _chips(app) == []


@pytest.fixture
def clipboard(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A wl-paste on PATH that offers an image, as under Wayland with an image copied."""
    folder = tmp_path / "bin"
    folder.mkdir()
    image = tmp_path / "copied.png"
    image.write_bytes(picture("PNG", (40, 30)))
    script = folder / "wl-paste"
    script.write_text(f"""#!/bin/sh
case "$*" in
  *--list-types*) printf 'text/plain\\nimage/png\\n' ;;
  *--type\\ image/png*) cat '{image}' ;;
  *) exit 1 ;;
esac
""")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-test")
    return image


async def test_ctrl_v_attaches_the_clipboards_image(llm_env: FakeLLMServer, make_app, clipboard: Path) -> None:
    llm_env.enqueue(Reply.text("Seen."))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await pilot.press("ctrl+v")
        await wait_for(pilot, lambda: _chips(app) == ["clipboard-1"], what="the clipboard's chip")
        await type_and_send(pilot, "and this?")
        await wait_for(pilot, lambda: llm_env.requests and not app.busy, what="the turn")
        parts = llm_env.requests[0]["body"]["messages"][-1]["content"]
        assert parts[1]["image_url"]["url"] == ("data:image/png;base64,"
                                                + base64.b64encode(clipboard.read_bytes()).decode())


async def test_ctrl_v_without_a_clipboard_program_says_so(llm_env: FakeLLMServer, make_app,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("WAYLAND_DISPLAY", "DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        shown: list[str] = []
        app.notify = lambda message, **kw: shown.append(str(message))  # type: ignore[method-assign]
        await pilot.press("ctrl+v")
        await wait_for(pilot, lambda: bool(shown), what="the notice")
        assert "no clipboard program" in shown[0] and _chips(app) == []


async def test_chips_refused_for_a_model_without_images_come_back_unsent(
    llm_env: FakeLLMServer, make_app, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SWEBASH_AI_MODEL", "openai/gpt-3.5-turbo")  # litellm's data: no image input
    (workspace / "shot.png").write_bytes(picture())
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        app.prompt.post_message(events.Paste("shot.png"))
        await wait_for(pilot, lambda: _chips(app) == ["shot.png"], what="the chip")
        await type_and_send(pilot, "what is this?")
        await wait_for(pilot, lambda: not app.busy and _chips(app) == ["shot.png"], what="the chip back")
        assert llm_env.requests == []
        errors = [str(w.render()) for w in app.chat.messages() if "ErrorMessage" in type(w).__name__]
        assert any("takes no images" in e for e in errors), errors
