"""``/undo`` in the app: the write tools' and approved commands' changes undone turn by turn, through Pilot and
the loopback server."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import idle, type_and_send, wait_for

from swebash_ai.frontends.tui.screens.confirm import ConfirmScreen
from swebash_ai.frontends.tui.widgets.chat import InfoMessage, NoticeMessage
from swebash_ai.testing.fake_server import FakeLLMServer, Reply
from swebash_ai.tools.exec import run_command
from swebash_ai.tools.fs import read_file
from swebash_ai.tools.fs_write import edit_file, write_file

TOOLS = [read_file, write_file, edit_file]


async def _turn(pilot, app, text: str) -> None:
    await type_and_send(pilot, text)
    await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="approval")
    await pilot.press("y")
    await idle(pilot)


def _texts(app, kind) -> list[str]:
    return [str(w.render()) for w in app.query(kind)]


async def test_undo_reverts_turn_by_turn_refuses_conflicts_and_tells_the_model(
    llm_env: FakeLLMServer, make_app, workspace: Path
) -> None:
    notes = workspace / "notes.txt"
    notes.write_text("alpha\n")
    notes.chmod(0o640)
    llm_env.enqueue(Reply.tool_calls([("edit_file", {"path": "notes.txt", "old": "alpha", "new": "beta"})]),
                    Reply.text("Edited."),
                    Reply.tool_calls([("write_file", {"path": "made.txt", "content": "new\n"})]),
                    Reply.text("Made."))
    app = make_app(tools=TOOLS)
    async with app.run_test(size=(120, 40)) as pilot:
        await _turn(pilot, app, "edit notes")
        await _turn(pilot, app, "make a file")
        assert (workspace / "made.txt").exists() and notes.read_text() == "beta\n"

        await type_and_send(pilot, "/undo everything")  # a typo undoes nothing
        await wait_for(pilot, lambda: any("--force" in t for t in _texts(app, NoticeMessage)), what="usage")
        assert (workspace / "made.txt").exists()

        await type_and_send(pilot, "/undo")  # the last turn: made.txt did not exist
        await wait_for(pilot, lambda: len(_texts(app, InfoMessage)) >= 1, what="undo shown")
        assert not (workspace / "made.txt").exists()
        assert "made.txt: removed" in _texts(app, InfoMessage)[-1]

        notes.write_text("beta, then mine\n")  # changed by someone else
        await type_and_send(pilot, "/undo")
        await wait_for(pilot, lambda: any("notes.txt" in t for t in _texts(app, NoticeMessage)), what="refusal")
        assert notes.read_text() == "beta, then mine\n"

        await type_and_send(pilot, "/undo --force")  # the turn before
        await wait_for(pilot, lambda: len(_texts(app, InfoMessage)) >= 2, what="second undo")
        assert notes.read_text() == "alpha\n"
        assert (notes.stat().st_mode & 0o777) == 0o640

        llm_env.enqueue(Reply.text("Understood."))
        await type_and_send(pilot, "carry on")
        await idle(pilot)
    users = [m["content"] for m in llm_env.requests[-1]["body"]["messages"] if m["role"] == "user"]
    assert "undid your changes" in users[-1] and "made.txt" in users[-1] and "notes.txt" in users[-1]
    assert users[-1].startswith("carry on\n\n[Note: ")  # the note rides after the typed text, apart from it
    typed = [m for m in app.session.conversation.messages if m.get("typed")]
    assert typed[-1]["content"] == "carry on"


async def test_a_user_command_is_its_own_turn_and_undone_alone(llm_env: FakeLLMServer, make_app,
                                                                workspace: Path) -> None:
    """``!rm b.txt`` (approved), then a model turn that writes a file: each is a turn of its own, so /undo
    takes back the model's file alone, and a second /undo puts b.txt back."""
    (workspace / "b.txt").write_text("bee\n")
    llm_env.enqueue(Reply.tool_calls([("write_file", {"path": "made.txt", "content": "new\n"})]),
                    Reply.text("Made."))
    app = make_app(tools=[*TOOLS, run_command])
    async with app.run_test(size=(120, 40)) as pilot:
        await _turn(pilot, app, "!rm b.txt")
        await _turn(pilot, app, "make a file")
        assert not (workspace / "b.txt").exists() and (workspace / "made.txt").exists()

        await type_and_send(pilot, "/undo")
        await wait_for(pilot, lambda: len(_texts(app, InfoMessage)) >= 1, what="undo shown")
        assert not (workspace / "made.txt").exists()
        assert not (workspace / "b.txt").exists()  # the command's turn is the one before

        await type_and_send(pilot, "/undo")
        await wait_for(pilot, lambda: len(_texts(app, InfoMessage)) >= 2, what="second undo")
        assert (workspace / "b.txt").read_text() == "bee\n"
        assert "command `rm b.txt`" in _texts(app, InfoMessage)[-1]
