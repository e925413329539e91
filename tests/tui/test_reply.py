"""Assistant Markdown: plain lists are drawn by one widget each, with a hanging indent."""

from __future__ import annotations

from textual.app import App

from swebash_ai.tui.widgets.reply import AssistantMessage, CompactBulletList, CompactOrderedList

MARKDOWN = (
    "Intro.\n\n- first item, long enough to wrap around at this narrow width for sure\n- second\n\n"
    "3. three\n4. four\n\n- nested\n  - inner\n"
)


class _Host(App[None]):
    def compose(self):  # type: ignore[no-untyped-def]
        yield AssistantMessage(MARKDOWN)


async def test_plain_lists_are_one_widget_with_a_hanging_indent():
    app = _Host()
    async with app.run_test(size=(40, 30)) as pilot:
        await pilot.pause()
        bullets = app.query(CompactBulletList).first()
        ordered = app.query_one(CompactOrderedList)
        (nested,) = [w for w in app.query(CompactBulletList) if w.query(CompactBulletList)]
        assert not bullets.children and bullets.size.height >= 3  # wrapped, no child widgets
        lines = [line.plain for line in bullets._lines(bullets.content_size.width)]
        assert lines[0].startswith("• first") and lines[1].startswith("  ") and lines[-1] == "• second"
        assert [line.plain for line in ordered._lines(30)] == ["3. three", "4. four"]
        assert nested._items is None  # a list holding a list keeps Textual's rendering...
        assert nested.query_one(CompactBulletList)._items is not None  # ...and the inner one is compact


def test_code_highlighting_is_computed_once_per_code_and_theme() -> None:
    from swebash_ai.tui.widgets.reply import CachedFence, _highlight

    _highlight.cache_clear()
    first = CachedFence.highlight("x = 1\n", "python", dark=True)
    again = CachedFence.highlight("x = 1\n", "python", dark=True)
    other = CachedFence.highlight("x = 1\n", "python", dark=False)
    assert again is first and other is not first
    assert _highlight.cache_info().hits == 1 and _highlight.cache_info().misses == 2
