"""Assistant Markdown drawn line by line: blocks, rendering, theme colours, growth, width, selection."""

from __future__ import annotations

import itertools
from typing import Any

from textual.app import App
from textual.color import Color
from textual.geometry import Size

from swebash_ai.frontends.tui.themes import load_themes
from swebash_ai.frontends.tui.widgets import reply
from swebash_ai.frontends.tui.widgets.blocks import split_blocks
from swebash_ai.frontends.tui.widgets.reply import AssistantMessage, highlight_code

MARKDOWN = (
    "# Title\n\nSome **bold** text and `code`.\n\n"
    "1. first step, long enough to wrap around at this narrow width for sure\n2. second\n\n"
    "- bullet\n  - nested\n\n"
    "```python\ndef f(x):\n\n    return x + 1  # one\n```\n\n"
    "| key | value |\n|-----|-------|\n| a   | 1     |\n\n---\n\nThe end.\n"
)


class _Host(App[None]):
    CSS = "AssistantMessage.-alert { background: red; }"

    def __init__(self, markdown: str) -> None:
        super().__init__()
        self.markdown = markdown
        for theme in load_themes().themes.values():
            self.register_theme(theme)
        self.theme = "dark"

    def compose(self) -> Any:
        yield AssistantMessage(self.markdown)


def texts(message: AssistantMessage) -> list[str]:
    return message.text_lines()


def test_blocks_are_cut_at_blank_lines_outside_code_and_before_the_margin() -> None:
    blocks = split_blocks(MARKDOWN)
    assert blocks[0] == "# Title\n\n"
    assert blocks[2].startswith("1. first") and blocks[2].endswith("2. second\n\n")
    assert blocks[3] == "- bullet\n  - nested\n\n"
    # a blank line inside a fence does not cut it, and its closing line does not open a new one
    assert blocks[4] == "```python\ndef f(x):\n\n    return x + 1  # one\n```\n\n"
    assert blocks[5].startswith("| key") and blocks[6] == "---\n\n" and blocks[7] == "The end.\n"
    assert split_blocks("- item\n\n  more of the item\n\nnext\n") == ["- item\n\n  more of the item\n\n", "next\n"]
    assert "".join(split_blocks(MARKDOWN)) == MARKDOWN


async def test_markdown_is_rendered_with_one_blank_line_between_blocks() -> None:
    app = _Host(MARKDOWN)
    async with app.run_test(size=(50, 40)) as pilot:
        await pilot.pause()
        message = app.query_one(AssistantMessage)
        lines = texts(message)
        assert lines[0] == "Title" and lines[1] == "" and lines[2] == "Some bold text and code."
        assert lines[4].startswith(" 1. first step") and lines[5].startswith("    ")  # hanging indent
        assert lines[6].startswith(" 2. second")
        assert lines[8].startswith(" • bullet") and "• nested" in lines[9]
        assert lines[11].strip() == "def f(x):" and lines[13].strip() == "return x + 1  # one"
        assert lines[15].split() == ["key", "value"] and lines[17].split() == ["a", "1"]
        assert set(lines[19]) == {"─"} and lines[-1] == "The end."
        assert "" not in (lines[0], lines[-1])
        assert all(not (a == "" and b == "") for a, b in itertools.pairwise(lines)), lines
        assert message.size.height == len(lines)


async def test_colours_come_from_the_theme_and_follow_a_theme_switch() -> None:
    app = _Host(MARKDOWN)
    async with app.run_test(size=(50, 40)) as pilot:
        await pilot.pause()
        message = app.query_one(AssistantMessage)

        def heading_colour() -> Any:
            segment = next(s for s in message._all_lines(message.size.width)[0] if s.text.strip())
            return segment.style.color  # type: ignore[union-attr]

        def expected(variable: str) -> Any:
            return Color.parse(app.theme_variables[variable]).rich_color

        assert heading_colour() == expected("text-primary")
        code = message._all_lines(message.size.width)[11]
        backgrounds = {s.style.bgcolor for s in code if s.style}
        assert backgrounds == {expected("panel")}  # the code block sits on the theme's panel colour
        assert len({s.style.color for s in code if s.text.strip() and s.style}) >= 2  # highlighted
        app.theme = "light"
        await pilot.pause()
        assert heading_colour() == expected("text-primary") != Color.parse("#5FA8D3").rich_color


async def test_appended_blocks_are_rendered_once_and_earlier_ones_kept() -> None:
    app = _Host("First paragraph.\n\n")
    async with app.run_test(size=(50, 20)) as pilot:
        await pilot.pause()
        message = app.query_one(AssistantMessage)
        first = message._rendered[0]
        await message.append("Second paragraph.\n\n```sh\nls -l\n```\n\n")
        await pilot.pause()
        assert message._rendered[0] is first  # not rendered again
        assert len(message._rendered) == 3
        assert texts(message) == ["First paragraph.", "", "Second paragraph.", "", " ls -l"]
        assert message.source.endswith("ls -l\n```\n\n")
        assert message.size.height == 5


async def test_a_layout_during_an_append_draws_the_blocks_shown_before_and_renders_none(monkeypatch) -> None:
    """Blocks are rendered one per step of the UI loop; a layout pass in between must not render the rest
    (inside one pass, where a keypress would wait for it) nor show half of the append."""
    app = _Host("First.\n\n")
    async with app.run_test(size=(50, 20)) as pilot:
        await pilot.pause()
        message = app.query_one(AssistantMessage)
        rendered: list[int] = []
        real_render = AssistantMessage._render_next

        def render_next(self: AssistantMessage, width: int) -> None:
            rendered.append(width)
            real_render(self, width)

        monkeypatch.setattr(AssistantMessage, "_render_next", render_next)
        seen: list[tuple[int, int]] = []  # (height a layout pass would get, blocks rendered so far)

        async def pause(_app: Any) -> None:
            height = message.get_content_height(Size(50, 20), Size(50, 20), message.size.width)
            seen.append((height, len(rendered)))

        monkeypatch.setattr(reply, "yield_to_input", pause)
        await message.append("Second.\n\nThird.\n\nFourth.\n\n")
        assert seen == [(1, 1), (1, 2)]  # a pause after each block but the last: still "First." alone
        assert len(rendered) == 3  # each new block once, none by get_content_height
        await pilot.pause()
        assert texts(message) == ["First.", "", "Second.", "", "Third.", "", "Fourth."]
        assert len(rendered) == 3


async def test_a_new_width_wraps_again() -> None:
    app = _Host("word " * 30)
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        message = app.query_one(AssistantMessage)
        wide = len(texts(message))
        await pilot.resize_terminal(30, 20)
        await pilot.pause()
        assert len(texts(message)) > wide
        assert message.size.height == len(texts(message))
        assert max(len(line) for line in texts(message)) <= 30


async def test_a_selection_copies_the_rendered_text() -> None:
    from textual.geometry import Offset
    from textual.selection import Selection

    app = _Host("alpha beta\n\ngamma\n")
    async with app.run_test(size=(40, 10)) as pilot:
        await pilot.pause()
        message = app.query_one(AssistantMessage)
        picked = message.get_selection(Selection(Offset(6, 0), Offset(5, 2)))
        assert picked == ("beta\n\ngamma", "\n")


async def test_a_mouse_drag_selects_the_text_as_drawn() -> None:
    app = _Host("First paragraph here.\n\nSecond **bold** words.\n")
    async with app.run_test(size=(50, 20)) as pilot:
        await pilot.pause()
        await pilot.mouse_down(AssistantMessage, offset=(0, 0))
        await pilot.hover(AssistantMessage, offset=(10, 2))
        await pilot.mouse_up(AssistantMessage, offset=(10, 2))
        await pilot.pause()
        selected = app.screen.get_selected_text()
        assert selected is not None and selected.startswith("First paragraph here.\n\nSecond bold")
        assert "*" not in selected  # the rendered words, not the Markdown


def test_code_highlighting_is_computed_once_per_code_and_theme() -> None:
    from rich.style import Style

    highlight_code.cache_clear()
    background = Style(bgcolor="#222222")
    first = highlight_code("x = 1\n", "python", "monokai", background)
    assert highlight_code("x = 1\n", "python", "monokai", background) is first
    assert highlight_code("x = 1\n", "python", "friendly", background) is not first
    assert highlight_code.cache_info().hits == 1
    assert [segment.text for segment in first[0]] == ["x", " ", "=", " ", "1"]
    assert highlight_code("x", "no-such-language", "monokai", background)[0][0].text == "x"  # plain text


async def test_a_restyle_that_changes_no_colour_does_not_render_again(monkeypatch) -> None:
    app = _Host(MARKDOWN)
    async with app.run_test(size=(50, 40)) as pilot:
        await pilot.pause()
        message = app.query_one(AssistantMessage)
        rendered: list[int] = []
        original = AssistantMessage._render_next
        monkeypatch.setattr(AssistantMessage, "_render_next",
                            lambda self, width: rendered.append(width) or original(self, width))
        app.update_styles(message)  # what Textual does to every widget of the chat when it gains focus
        message.refresh(layout=True)
        await pilot.pause()
        assert rendered == [] and texts(message)[0] == "Title"
        message.add_class("-alert")  # a real change of colours: rendered again, once per block
        await pilot.pause()
        assert len(rendered) == len(message._blocks)
        first = next(iter(message._all_lines(message.size.width)[0]))
        assert first.style is not None and first.style.bgcolor is not None
        assert first.style.bgcolor.triplet == (255, 0, 0)


async def test_an_empty_message_has_no_lines() -> None:
    from textual.selection import Selection

    app = _Host("")
    async with app.run_test(size=(50, 10)) as pilot:
        await pilot.pause()
        message = app.query_one(AssistantMessage)
        assert message.size.height == 0 and message.text_lines() == []
        assert message.get_selection(Selection(None, None)) == ("", "\n")


async def test_a_click_on_a_link_opens_it(monkeypatch) -> None:
    app = _Host("See [the docs](https://example.com/docs) here.\n")
    opened: list[str] = []
    monkeypatch.setattr(app, "open_url", lambda url, **_: opened.append(url))
    async with app.run_test(size=(50, 10)) as pilot:
        await pilot.pause()
        await pilot.click(AssistantMessage, offset=(1, 0))  # on "See"
        assert opened == []
        await pilot.click(AssistantMessage, offset=(6, 0))  # on "the docs"
        assert opened == ["https://example.com/docs"]
