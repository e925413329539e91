"""The editor door (``swebash-ai acp``) carries an edit's language-server diagnostics: in the finished call's text
and as data in its raw output."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from swebash_ai.testing.fake_server import FakeLLMServer, Reply

from .test_acp import Editor, drive, new
from .test_lsp_oneshot import _configure

pytestmark = pytest.mark.timeout(90)


def test_a_write_reports_its_diagnostics_to_the_editor(llm_env: FakeLLMServer, cli_env: dict[str, str],
                                                       isolated_env: Path, workspace: Path) -> None:
    _configure(isolated_env, workspace)
    llm_env.enqueue(Reply.tool_calls([("write_file", {"path": "m.fk", "content": "a\nb ERROR: no such name\n"})]),
                    Reply.text("Done."))
    editor = Editor(lambda options, call: "allow_once")
    env = {**cli_env, "SWEBASH_AI_LSP_DIAGNOSTICS": "edit", "SWEBASH_AI_EXEC_SANDBOX": "none"}

    async def script(conn: Any, init: Any) -> Any:
        return await conn.prompt(session_id=await new(conn, workspace), prompt=[text_block("write")])

    response, _ = drive(env, workspace, editor, script)
    assert response.stop_reason == "end_turn"
    final = editor.of("tool_call_update")[-1]
    assert final.status == "completed"
    diag = final.raw_output["diagnostics"]
    assert diag["status"] == "ok" and diag["errors"] == 1 and diag["items"][0]["message"] == "no such name"
    assert "m.fk:2:3: error[fake-error] (fake) no such name" in final.content[-1].content.text
