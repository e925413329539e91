"""Property: after any burst of keys and pastes, the prompt holds what a line editor would (``line_model.py``).

Thousands of bursts go to one app, each posted whole to the app's queue as the terminal driver posts what
it reads (all of it before any is handled, as in a burst over a slow link), then compared with the model.
A smaller number goes through a real pseudo-terminal as bytes in one write (``real_terminal.py``).
"""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from textual import events
from textual.keys import _character_to_key

from swebash_ai.config.settings import load_settings
from swebash_ai.frontends.tui.app import SwebashApp
from swebash_ai.testing.server_process import fake_server_process
from tests.tui.line_model import Pasted, Pressed, Step, Typed, bursts, edit
from tests.tui.real_terminal import KEYS, RealTerminal, app_env, paste

pytestmark = pytest.mark.timeout(180)

BURSTS = int(os.environ.get("SWEBASH_AI_TEST_BURSTS", "1500"))
"""Bursts through the app's queue (~10 ms of CPU each); more for a deeper run."""


class AppOnLoop:
    """One app (``run_test``, headless) on an event loop that runs only while a burst is applied, in this
    thread, so that a synchronous Hypothesis test can drive it burst after burst without starting an app
    per example (and without a second thread: handing the interpreter lock over costs more than a burst)."""

    def __init__(self, app: SwebashApp) -> None:
        self.app = app
        self.loop = asyncio.new_event_loop()
        self._ready: asyncio.Future[None] = self.loop.create_future()
        self._stop = asyncio.Event()
        self._task = self.loop.create_task(self._main())  # one task enters and leaves run_test

    async def _main(self) -> None:
        async with self.app.run_test(size=(140, 12)) as pilot:  # wide: Home and End never meet a wrapped row
            await pilot.pause()
            with self.app.batch_update():  # no repaints: the bursts are about input, and stay fast
                self._ready.set_result(None)
                await self._stop.wait()

    def __enter__(self) -> AppOnLoop:
        self.loop.run_until_complete(asyncio.wait([self._ready, self._task], return_when=asyncio.FIRST_COMPLETED))
        if self._task.done():
            self._task.result()  # the app failed to start: its error
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self.loop.run_until_complete(self._task)
        self.loop.close()

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)


def event_of(step: Step) -> events.Event:
    if isinstance(step, Typed):
        return events.Key(_character_to_key(step.char), step.char)
    if isinstance(step, Pasted):
        return events.Paste(step.text)
    return events.Key(step.key, None)


@pytest.fixture(scope="module")
def driven(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppOnLoop]:
    home = tmp_path_factory.mktemp("home")
    saved = {name: os.environ.get(name) for name in ("SWEBASH_AI_HOME", "HOME")}
    os.environ.update(SWEBASH_AI_HOME=str(home / "swh"), HOME=str(home))
    try:
        app = SwebashApp(load_settings(), cwd=tmp_path_factory.mktemp("workspace"), probe_ollama=False,
                         setup_on_start=False)
        with AppOnLoop(app) as driven:
            yield driven
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


async def _apply(driven: AppOnLoop, burst: list[Step]) -> tuple[str, int]:
    app = driven.app
    prompt = app.prompt
    prompt.load_text("")
    app.screen.set_focus(prompt)
    for step in burst:  # all posted before any is handled
        app.post_message(event_of(step))
    quiet = 0
    while quiet < 3:  # every queue on the way empty, three looks in a row (a handler may post more)
        await asyncio.sleep(0)
        quiet = quiet + 1 if app.input_first._handled() and prompt.message_queue_size == 0 else 0
    row, col = prompt.cursor_location
    assert row == 0
    return prompt.text, col


@settings(max_examples=BURSTS, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                    HealthCheck.too_slow])
@given(burst=bursts)
def test_a_burst_of_events_edits_the_prompt_like_a_line_editor(driven: AppOnLoop, burst: list[Step]) -> None:
    assert driven.run(_apply(driven, burst)) == edit(burst)


# --- the same property through a real terminal (fewer: each run costs a round trip through the app) -------
def bytes_of(burst: list[Step]) -> str:
    out = []
    for step in burst:
        if isinstance(step, Typed):
            out.append(step.char)
        elif isinstance(step, Pasted):
            out.append(paste(step.text))
        else:
            out.append(KEYS[step.key])
    return "".join(out)


@pytest.fixture(scope="module")
def terminal(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealTerminal]:
    home = tmp_path_factory.mktemp("pty-home")
    workspace = tmp_path_factory.mktemp("pty-workspace")
    with fake_server_process([], echo=True) as url, RealTerminal(app_env(home, url), workspace) as term:
        term.wait_ready()
        yield term


_runs = itertools.count()


@pytest.mark.terminal
@pytest.mark.skipif(os.name != "posix", reason="needs a pty")
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(burst=bursts)
def test_a_burst_written_to_a_real_terminal_edits_the_prompt_like_a_line_editor(
        terminal: RealTerminal, burst: list[Step]) -> None:
    expected, _ = edit(burst)
    marker = f" #{next(_runs)}"  # the prompt sends no blank message, and history keeps no repeat: a marker
    terminal.write(bytes_of(burst) + KEYS["end"] + marker)
    assert terminal.sent() == expected + marker


def test_the_model_knows_the_keys_of_the_terminal_harness() -> None:
    from tests.tui.line_model import EDIT_KEYS

    assert set(EDIT_KEYS) <= set(KEYS)
    assert edit([Typed("a"), Typed("b"), Typed("c"), Pressed("backspace"), Pasted("def")]) == ("abdef", 5)
    assert edit([Pasted("foo bar.. "), Pressed("ctrl+w")]) == ("foo bar", 7)
    assert edit([Pasted("foo bar"), Pressed("ctrl+w")]) == ("foo ", 4)
