"""A helper's group in the tool pane is drawn again when the session is resumed, as it was live."""

from __future__ import annotations

from tui_helpers import idle, type_and_send, wait_for

from swebash_ai.testing.fake_server import Reply


async def test_a_helpers_group_is_rebuilt_on_resume(llm_env, make_app, workspace):
    (workspace / "notes.txt").write_text("alpha\n")
    llm_env.enqueue(
        Reply.tool_calls([("task", {"description": "look", "prompt": "read notes", "agent": "explore"}, "t1")]),
        Reply.tool_calls([("read_file", {"path": "notes.txt"}, "r1"), ("read_file", {"path": "gone.txt"}, "r2")]),
        Reply.text("notes.txt says alpha"),
        Reply.text("The helper found alpha."),
    )
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "look around")
        await wait_for(pilot, lambda: "t1" in app.activity.entries and app.activity.entries["t1"].state == "done",
                       what="the task call")
        live = app.activity.entries["t1"].output_text
    assert "[explore] ✓ read_file: ok" in live and "[explore] ✗ read_file: error" in live

    resumed = make_app(resume_latest=True)
    async with resumed.run_test(size=(140, 40)) as pilot:
        await idle(pilot)
        await wait_for(pilot, lambda: "t1" in resumed.activity.entries, what="the resumed task call")
        shown = resumed.activity.entries["t1"].output_text
    for line in ("[explore] ✓ read_file: ok", "[explore] ✗ read_file: error", "notes.txt"):
        assert line in shown, shown
