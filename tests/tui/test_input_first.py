"""Input before output: a keypress on its way to the prompt holds repaints and streamed commits."""

from __future__ import annotations

import asyncio
import time

from textual import events

from swebash_ai.frontends.tui import input_first
from swebash_ai.frontends.tui.input_first import InputFirst, yield_to_input
from tests.tui.tui_helpers import idle, wait_for


async def test_a_key_holds_repaints_until_the_prompt_has_handled_it(make_app, monkeypatch) -> None:
    monkeypatch.setattr(input_first, "REPAINT_WITHIN", 0.0)  # this key holds, however recent the last hold
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await idle(pilot)
        gate = app.input_first
        assert not gate.holding and app._batch_count == 0
        app.post_message(events.Key("x", "x"))
        assert gate.holding and app._batch_count == 1  # from the moment the key arrives
        await wait_for(pilot, lambda: not gate.holding, timeout=2, what="the hold to end")
        assert app.prompt.text == "x"
        assert app._batch_count == 0
        assert gate.holds == 1


async def test_a_layout_waits_for_a_key_stuck_behind_other_work(make_app, monkeypatch) -> None:
    """The app's queue holds slow work, then a key; the first layout pass after that already shows it."""
    # longer than the work, however slow the machine (the hold ends as soon as the key is handled)
    monkeypatch.setattr(input_first, "HOLD_MAX", 600.0)
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await idle(pilot)
        prompts_seen: list[str] = []  # what the prompt held at each layout pass
        screen = app.screen
        real_layout = screen._refresh_layout

        def layout(*args, **kwargs):
            prompts_seen.append(app.prompt.text)
            return real_layout(*args, **kwargs)

        monkeypatch.setattr(screen, "_refresh_layout", layout)

        async def work() -> None:  # yields to the loop: the screen could repaint in between
            await asyncio.sleep(0.002)

        for _ in range(40):  # ~80 ms of work, far more than a screen update period (1/60 s)
            app.call_later(work)
        app.post_message(events.Key("x", "x"))
        app.chat.add_notice("a layout is due")  # mounts a widget: a layout pass is requested
        await wait_for(pilot, lambda: bool(prompts_seen), timeout=5, what="a layout pass")
        assert prompts_seen[0] == "x"


async def a_key_never_handled(pilot, monkeypatch) -> InputFirst:
    """The app's gate, made to believe a key is always on its way (only the time limit ends a hold)."""
    await idle(pilot)
    gate = pilot.app.input_first
    monkeypatch.setattr(gate, "_handled", lambda: False)
    return gate


async def test_a_hold_ends_after_hold_max_even_if_the_queues_never_empty(make_app, monkeypatch) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        gate = await a_key_never_handled(pilot, monkeypatch)
        start = time.monotonic()
        gate.hold()
        while gate.holding:
            await asyncio.sleep(0.002)
        assert time.monotonic() - start >= input_first.HOLD_MAX  # the time limit ended it: the key never was handled
        assert app._batch_count == 0
        await pilot.pause()


async def test_streamed_work_waits_while_a_key_is_handled(make_app, monkeypatch) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        gate = await a_key_never_handled(pilot, monkeypatch)
        monkeypatch.setattr(input_first, "HOLD_MAX", 600.0)  # only the release ends this hold
        gate.hold()
        waiting = asyncio.ensure_future(yield_to_input(app))
        await asyncio.sleep(0.05)
        assert not waiting.done()  # a flush or a block render would wait here
        gate.release()
        await asyncio.wait_for(waiting, 1)
        assert not gate.holding and app._batch_count == 0


async def test_keys_typed_without_pause_leave_the_screen_its_turn(make_app, monkeypatch) -> None:
    from swebash_ai.frontends.tui import input_first

    # "Right after" must not depend on how fast a loaded test machine gets from one line to the next.
    monkeypatch.setattr(input_first, "REPAINT_WITHIN", 30.0)
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await idle(pilot)
        gate = app.input_first
        await wait_for(pilot, lambda: gate._repainted or not gate.holds, timeout=2, what="a quiet screen")
        gate.hold()
        assert gate.holding
        batches = app._batch_count
        gate.release()
        assert app._batch_count == batches - 1
        gate.hold()  # a key right after a hold, before the screen was repainted: no hold
        assert not gate.holding and app._batch_count == batches - 1
        await wait_for(pilot, lambda: gate._repainted, timeout=2, what="a repaint")
        gate.hold()
        assert gate.holding
        gate.release()


async def test_the_key_is_drawn_before_a_pending_layout_pass(make_app) -> None:
    """A streaming chat has asked for a layout pass (tens of ms on a long reply): the frame that shows the
    key comes first, drawn in the current layout, and the layout pass after it."""
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await idle(pilot)
        gate = app.input_first
        screen = app.screen
        layouts = 0
        frames: list[tuple[str, int]] = []  # (the prompt's text, layout passes so far) at each frame drawn
        real_layout, real_display = screen._refresh_layout, app._display

        def layout(*args, **kwargs):
            nonlocal layouts
            layouts += 1
            return real_layout(*args, **kwargs)

        def display(target, renderable):
            if renderable is not None and not app._batch_count:
                frames.append((app.prompt.text, layouts))
            return real_display(target, renderable)

        screen._refresh_layout = layout
        app._display = display
        screen._layout_required = True  # as after a flush of the chat
        app.post_message(events.Key("x", "x"))
        await wait_for(pilot, lambda: not gate.holding and layouts > 0, timeout=2, what="the key and a layout")
        first_with_key = next(layouts_before for text, layouts_before in frames if text == "x")
        assert first_with_key == 0
        assert gate.echoes == 1
