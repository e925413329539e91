"""Language servers in the interactive app: the tool pane says what the server found under the edit, ``/ps`` lists
the server, ``/diagnostics`` shows a file's diagnostics, and quitting ends the server (checked by pid)."""

from __future__ import annotations

import json
import sys
import time

import psutil
import pytest
from tui_helpers import idle, type_and_send, wait_for

from swebash_ai.frontends.tui.widgets.chat import InfoMessage
from swebash_ai.testing.fake_server import Reply
from swebash_ai.tools.diagnostics import diagnostics
from swebash_ai.tools.fs_write import write_file

pytestmark = pytest.mark.timeout(120)


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def last(app, kind) -> str:  # type: ignore[no-untyped-def]
    found = app.query(kind)
    return str(found.last().render()) if found else ""


async def test_the_pane_ps_and_diagnostics_show_the_server_and_quitting_ends_it(
        llm_env, make_app, monkeypatch, isolated_env, workspace):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("SWEBASH_AI_TOOLS_CONFIRM", "false")
    monkeypatch.setenv("SWEBASH_AI_LSP_DIAGNOSTICS", "edit")
    monkeypatch.setenv("SWEBASH_AI_EXEC_SANDBOX", "none")  # the pid file goes to the workspace
    pid_file = workspace / "server.pids"
    script = workspace / "script.json"
    script.write_text(json.dumps({"pid_file": str(pid_file)}))
    config = isolated_env / ".swebash-ai" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    argv = json.dumps([sys.executable, "-m", "swebash_ai.testing.fake_lsp", str(script)])
    config.write_text(f'[lsp.fake]\ncommand = {argv}\nextensions = [".fk"]\nlanguages = ["fake"]\n')
    llm_env.enqueue(Reply.tool_calls([("write_file", {"path": "m.fk", "content": "a\nb ERROR: no such name\n"})]),
                    Reply.text("Written."))
    app = make_app(tools=[write_file, diagnostics])
    async with app.run_test(size=(140, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "write it")
        await wait_for(pilot, lambda: "Written." in app.chat.last_reply_text(), what="answer", timeout=60)
        await idle(pilot)
        (entry,) = app.activity.entries.values()
        assert "1 error, 0 warnings" in entry.status_text()
        assert "m.fk:2:3: error[fake-error] (fake) no such name" in entry.output_text
        pid = int(pid_file.read_text().split()[0])
        assert alive(pid)
        await type_and_send(pilot, "/ps")
        await wait_for(pilot, lambda: "Language servers" in last(app, InfoMessage), what="/ps listing")
        assert "fake  " in last(app, InfoMessage) and f"1 file  {workspace}" in last(app, InfoMessage)
        await type_and_send(pilot, "/diagnostics m.fk")
        await wait_for(pilot, lambda: "no such name" in last(app, InfoMessage), what="/diagnostics")
        assert "m.fk:2:3: error[fake-error] (fake) no such name" in last(app, InfoMessage)
    deadline = time.monotonic() + 20
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)  # the app quit: its language server went with it
