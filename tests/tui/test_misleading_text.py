"""Text that misleads without any escape code: invisible characters that change how text reads (bidi
overrides, zero-width characters) are drawn as ``<U+202E>`` markers, in reverse video wherever the user
approves or inspects something, and the text that runs is the text the model sent; a Markdown link whose
label lies shows the host it really goes to, and its hyperlink goes nowhere else."""

from __future__ import annotations

import json

from tui_helpers import idle, type_and_send, wait_for

from swebash_ai.frontends.tui.screens.confirm import ConfirmScreen
from swebash_ai.frontends.tui.widgets.activity import ToolEntry
from swebash_ai.frontends.tui.widgets.reply import AssistantMessage
from swebash_ai.safety.link_text import _host
from swebash_ai.testing.fake_server import FakeLLMServer, Reply
from swebash_ai.tools.exec import run_command

RLO, ZWSP = "\u202e", "\u200b"


def screen_text(app: object) -> str:
    strips = app.screen._compositor.render_strips()  # type: ignore[attr-defined]
    return "\n".join(strip.text for strip in strips)


def marker_styles(app: object, marker: str) -> list[bool]:
    """For each drawn segment holding ``marker``: whether it is in reverse video."""
    strips = app.screen._compositor.render_strips()  # type: ignore[attr-defined]
    return [bool(seg.style and seg.style.reverse) for strip in strips for seg in strip if marker in seg.text]


async def test_an_approval_shows_a_bidi_override_as_a_marker(llm_env: FakeLLMServer, make_app) -> None:
    # Drawn as is, "echo done #<RLO>lmth.exe" reads "echo done #exe.html": the end of the line is reversed.
    command = f"echo done #{RLO}lmth.exe {ZWSP}"
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": command})]), Reply.text("ok"))
    app = make_app(tools=[run_command])  # the real tool: its classifier asks because of the characters
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "do it")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="confirmation modal")
        await wait_for(pilot, lambda: "lmth.exe" in screen_text(app), what="the dialog drawn")
        text = screen_text(app)
        assert "echo done #<U+202E>lmth.exe <U+200B>" in text
        assert RLO not in text and ZWSP not in text
        assert "holds 2 invisible or direction-changing characters" in text
        assert "contains invisible or direction-changing Unicode characters (<U+202E>, <U+200B>)" in text
        styles = marker_styles(app, "<U+202E>")
        assert styles and all(styles)  # the marker stands out from the command around it
        entry = app.query_one(ToolEntry)
        assert "<U+202E>lmth.exe" in entry.summary
        await pilot.press("y")
        await wait_for(pilot, lambda: entry.state == "done", what="the command run")
        await idle(pilot)
    # What ran is what the model sent (bash printed "done": the rest is a comment); only the screen shows markers.
    messages = llm_env.requests[-1]["body"]["messages"]
    assert json.loads(messages[-2]["tool_calls"][0]["function"]["arguments"]) == {"command": command}
    assert "done" in messages[-1]["content"]


ZWJ = "\u200d"
ANSWER = (
    "Download it from [https://github.com/acme/tool](https://evil.example/steal) "
    "or [github.com](https://github.com@evil.example/x); the docs are at [the site](https://docs.acme.example/).\n\n"
    f"Then run `cat notes{RLO}txt.sh` 👩{ZWJ}💻\n\n"
    "<https://github.com/acme>"
)


async def test_the_chat_shows_where_links_go_and_marks_invisible_characters(
    llm_env: FakeLLMServer, make_app
) -> None:
    llm_env.enqueue(Reply.text(ANSWER, chunk_size=5))
    app = make_app()
    async with app.run_test(size=(160, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "where do I get it?")
        await wait_for(pilot, lambda: bool(app.query(AssistantMessage))
                       and app.query(AssistantMessage).last().source.endswith("<https://github.com/acme>"),
                       what="the whole answer")
        await idle(pilot)
        text = " ".join(screen_text(app).split())
        assert "https://github.com/acme/tool (evil.example)" in text
        assert "github.com (evil.example)" in text
        assert "the site (docs.acme.example)" in text
        assert "https://github.com/acme (" not in text  # an honest autolink is left alone
        assert "cat notes<U+202E>txt.sh" in text and RLO not in text
        message = app.query(AssistantMessage).last()
        assert f"👩{ZWJ}💻" in message.source  # an emoji sequence keeps its joiner
        # Every hyperlink drawn goes to a host shown on its own line.
        strips = app.screen._compositor.render_strips()  # type: ignore[attr-defined]
        links = 0
        for strip in strips:
            for segment in strip:
                if segment.style is not None and segment.style.link:
                    links += 1
                    host = _host(segment.style.link)
                    assert host is not None and host in strip.text, (segment.style.link, strip.text)
        assert links


async def test_tool_output_shows_invisible_characters_as_reverse_video_markers(
    llm_env: FakeLLMServer, make_app
) -> None:
    # printf writes U+202E from octal escapes: the command itself holds no invisible character, its output does.
    command = r"printf 'invoice\342\200\256fdp.exe\n'"
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": command})]), Reply.text("ok"))
    app = make_app(tools=[run_command])
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "print it")
        await wait_for(pilot, lambda: bool(app.query(ToolEntry)) and app.query_one(ToolEntry).state == "done",
                       what="the command run")
        entry = app.query_one(ToolEntry)
        if not entry.expanded:
            entry.action_toggle_expand()
        await wait_for(pilot, lambda: "invoice<U+202E>fdp.exe" in screen_text(app), what="the output drawn")
        assert RLO not in screen_text(app)
        styles = marker_styles(app, "<U+202E>")
        assert styles and all(styles)


async def test_the_status_bar_and_the_sessions_picker_mark_invisible_characters(make_app, tmp_path) -> None:
    from swebash_ai.agent.session_files import SessionInfo
    from swebash_ai.frontends.tui.screens.sessions import SessionsScreen

    app = make_app()
    async with app.run_test(size=(160, 40)) as pilot:
        await idle(pilot)
        app.status.set_info(f"openai/fake{ZWSP}model", None, tmp_path / f"repo{RLO}gpj")
        await idle(pilot)
        styles = marker_styles(app, "<U+200B>") + marker_styles(app, "<U+202E>")
        assert len(styles) == 2 and all(styles), styles
        app.push_screen(SessionsScreen([SessionInfo("s1", tmp_path / "s1.jsonl", f"fix{RLO}txt.sh", 0.0)]))
        await wait_for(pilot, lambda: "fix<U+202E>txt.sh" in screen_text(app), what="the picker")
        styles = marker_styles(app, "<U+202E>")
        assert styles and all(styles)
