"""``swebash-ai export``: sessions made through the real loop, exported and checked against the OpenAI
chat fine-tuning shape by an independent checker written here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from swebash_ai.testing.fake_server import FakeLLMServer, Reply

SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"


def check_openai_record(record: Any) -> list[str]:
    """Every way ``record`` breaks the OpenAI chat fine-tuning format (an empty list when it is valid)."""
    errors: list[str] = []
    if not isinstance(record, dict) or set(record) != {"messages", "tools"}:
        return [f"record keys: {sorted(record) if isinstance(record, dict) else type(record)}"]
    tools, messages = record["tools"], record["messages"]
    names: set[str] = set()
    for tool in tools:
        fn = tool.get("function", {}) if isinstance(tool, dict) else {}
        if tool.get("type") != "function" or not isinstance(fn.get("name"), str):
            errors.append(f"bad tool {tool}")
            continue
        if not isinstance(fn.get("parameters"), dict) or fn["parameters"].get("type") != "object":
            errors.append(f"tool {fn['name']}: parameters must be a JSON object schema")
        names.add(fn["name"])
    allowed = {"system": {"role", "content"}, "user": {"role", "content"},
               "assistant": {"role", "content", "tool_calls"}, "tool": {"role", "tool_call_id", "content"}}
    pending: set[str] = set()
    seen_assistant = False
    for i, msg in enumerate(messages):
        role = msg.get("role")
        if role not in allowed:
            errors.append(f"message {i}: role {role!r}")
            continue
        if set(msg) - allowed[role]:
            errors.append(f"message {i}: unknown keys {sorted(set(msg) - allowed[role])}")
        if role == "system" and i != 0:
            errors.append(f"message {i}: system message not first")
        if role in ("user", "assistant") and pending:
            errors.append(f"message {i}: tool calls {sorted(pending)} have no result")
        if role != "assistant" and not isinstance(msg.get("content"), str):
            errors.append(f"message {i}: content must be a string")
        if role == "assistant":
            seen_assistant = True
            calls = msg.get("tool_calls", [])
            if "content" not in msg and not calls:
                errors.append(f"message {i}: assistant with neither content nor tool_calls")
            pending = set()
            for call in calls:
                fn = call.get("function", {})
                if call.get("type") != "function" or not call.get("id") or fn.get("name") not in names:
                    errors.append(f"message {i}: bad tool call {call}")
                    continue
                try:
                    if not isinstance(json.loads(fn["arguments"]), dict):
                        errors.append(f"message {i}: arguments are not a JSON object")
                except (TypeError, json.JSONDecodeError):
                    errors.append(f"message {i}: arguments are not a JSON string")
                pending.add(call["id"])
        if role == "tool":
            if msg.get("tool_call_id") not in pending:
                errors.append(f"message {i}: tool_call_id {msg.get('tool_call_id')!r} answers no open call")
            pending.discard(msg.get("tool_call_id"))
    if pending:
        errors.append(f"calls {sorted(pending)} have no result")
    if not seen_assistant:
        errors.append("no assistant message")
    return errors


def test_checker_catches_broken_records() -> None:
    good = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}], "tools": []}
    assert check_openai_record(good) == []
    orphan = {"messages": [{"role": "user", "content": "hi"},
                           {"role": "tool", "tool_call_id": "x", "content": "r", "name": "t"}], "tools": []}
    assert len(check_openai_record(orphan)) >= 2  # unknown key and an orphan result (and no assistant)


def _two_sessions(llm_env: FakeLLMServer, run_cli: Any, workspace: Path) -> None:
    (workspace / "notes.txt").write_text(f"the key is {SECRET}\n")
    llm_env.enqueue(
        Reply.tool_calls([("read_file", {"path": "notes.txt"}),
                          ("read_file", {"path": "other.txt", "password": "hunter2"})]),
        Reply.text("The file holds a key."),
    )
    res = run_cli("-c", "what is in notes.txt?")
    assert res.returncode == 0, res.stderr
    llm_env.enqueue(Reply.text("Hello!"))
    assert run_cli("-c", "hi").returncode == 0


def test_export_all_is_valid_openai_jsonl_with_secrets_redacted(
    llm_env: FakeLLMServer, run_cli: Any, workspace: Path
) -> None:
    _two_sessions(llm_env, run_cli, workspace)
    res = run_cli("export", "--all")
    assert res.returncode == 0, res.stderr
    records = [json.loads(line) for line in res.stdout.splitlines()]
    assert len(records) == 2
    for record in records:
        assert check_openai_record(record) == []
    first = records[0]
    assert SECRET not in res.stdout and "hunter2" not in res.stdout
    roles = [m["role"] for m in first["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "tool", "assistant"]
    # the system prompt is the one the model was sent
    assert first["messages"][0]["content"] == llm_env.requests[0]["body"]["messages"][0]["content"]
    # the tools are the schemas the model was offered
    assert first["tools"] == llm_env.requests[0]["body"]["tools"]
    call, other = first["messages"][2]["tool_calls"]
    assert call["function"]["name"] == "read_file"
    assert json.loads(other["function"]["arguments"]) == {"path": "other.txt", "password": "***"}
    # the tool result was masked before the model (and the saved session) got it; export redacts the rest
    assert first["messages"][3]["tool_call_id"] == call["id"]
    assert "the key is [masked:openai-key]" in first["messages"][3]["content"]
    assert first["messages"][4]["tool_call_id"] == other["id"]
    assert records[1]["messages"][1:] == [{"role": "user", "content": "hi"},
                                          {"role": "assistant", "content": "Hello!"}]
    # without an ID: the latest session only
    latest = run_cli("export")
    assert [json.loads(line) for line in latest.stdout.splitlines()] == [records[1]]


def test_export_markdown_transcript(llm_env: FakeLLMServer, run_cli: Any, workspace: Path) -> None:
    _two_sessions(llm_env, run_cli, workspace)
    sessions = sorted((Path(run_cli("config", "--path").stdout.strip()).parent / "sessions").glob("*.jsonl"))
    first_id = next(p.stem for p in sessions if "what is in notes.txt?" in p.read_text(encoding="utf-8"))
    other_id = next(p.stem for p in sessions if p.stem != first_id)
    # a unique prefix is enough: the shortest one (two sessions started in the same second share 16 characters)
    shared = next((i for i, (a, b) in enumerate(zip(first_id, other_id, strict=False)) if a != b), len(first_id))
    res = run_cli("export", first_id[: shared + 1], "--format", "markdown")
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert out.startswith("# what is in notes.txt?")
    assert "## User\n\nwhat is in notes.txt?" in out
    assert "**Tool call** `read_file`" in out and "**Result** of `read_file`" in out
    assert "## Assistant\n\nThe file holds a key." in out
    assert SECRET not in out and "hunter2" not in out


def test_export_markdown_marks_an_answer_that_broke_off(llm_env: FakeLLMServer, run_cli: Any) -> None:
    llm_env.enqueue(Reply.broken("The first half of the ans", after_chunks=3, chunk_size=4), Reply.text("Whole."))
    res = run_cli("-c", "explain")
    assert res.returncode == 4, res.stderr
    assert run_cli("--resume", "-c", "again").returncode == 0
    out = run_cli("export", "--format", "markdown").stdout
    cut, whole = out.split("## User\n\nagain")
    assert "*(The model's stream broke off here: this answer is incomplete.)*" in cut  # not passed off as whole
    assert "## Assistant\n\nWhole." in whole and "incomplete" not in whole


def test_export_errors_exit_2(run_cli: Any) -> None:
    res = run_cli("export")
    assert res.returncode == 2 and "no saved session" in res.stderr
    res = run_cli("export", "nosuch", "--all")
    assert res.returncode == 2 and "not both" in res.stderr
    res = run_cli("export", "--format", "yaml")
    assert res.returncode == 2 and "invalid choice" in res.stderr



def test_an_exported_record_holds_the_app_notes_the_model_read() -> None:
    from swebash_ai.agent.conversation import Conversation
    from swebash_ai.commands.export import openai_record

    conv = Conversation()
    conv.add_user("hello", typed=True)
    conv.add_note("[swebash-ai] background process p1 `make` exited with code 2 after 3.0 s")
    conv.add_assistant("It failed.")
    record = openai_record(conv)
    assert check_openai_record(record) == []  # the note is content, not a key the format does not know
    assert record["messages"][0]["content"] == ("hello\n\n[swebash-ai] background process p1 `make` exited "
                                                "with code 2 after 3.0 s")


def test_a_markdown_transcript_says_who_wrote_each_message() -> None:
    """A note the app gave the model is labelled as swebash-ai's, not shown under "## User"; a note riding on a
    typed message comes after the user's words; a ``!command`` is the command the user ran and its output. The
    fine-tuning record keeps the text the model read."""
    from swebash_ai.agent.conversation import Conversation
    from swebash_ai.commands.export import markdown_transcript, openai_record
    from swebash_ai.providers.base import ToolCall

    exited = "[swebash-ai] background process p1 `make` exited with code 2 after 3.0 s"
    conv = Conversation()
    conv.add_user("build it", typed=True)
    conv.add_assistant("Started.")
    conv.add_note(exited)  # after an answer: a message of its own
    conv.add_user("is it done?", typed=True)
    conv.add_note("[swebash-ai] the user undid your changes")  # on the user's message
    conv.add_assistant("No.")
    conv.add_user_run(ToolCall("user_1", "run_command", '{"command": "make"}'), "make: ok", typed="make")
    md = markdown_transcript(conv)
    sections = md.split("\n## ")[1:]
    assert [s.split("\n", 1)[0] for s in sections] == [
        "User", "Assistant", "Note from swebash-ai", "User", "Assistant", "User"]
    assert sections[2] == f"Note from swebash-ai\n\n{exited}\n"
    assert sections[3] == ("User\n\nis it done?\n\n*Note from swebash-ai to the model:*\n\n"
                           "[swebash-ai] the user undid your changes\n")
    assert "```text\n!make\n```" in sections[5]
    assert "**Result** of `run_command`\n\n```text\nmake: ok\n```" in sections[5]
    assert "I ran" not in md
    sent = [m["content"] for m in openai_record(conv)["messages"] if m["role"] == "user"]
    assert sent[1] == exited and sent[2].endswith("is it done?\n\n[swebash-ai] the user undid your changes")
    assert sent[3].startswith("[I ran run_command")


def test_a_markdown_transcript_says_why_an_answer_is_incomplete(tmp_path: Path) -> None:
    """Stopped by the user and broken off are told apart; a session saved before the reason was kept
    (``"incomplete": true``) keeps the words it always had."""
    from swebash_ai.agent.conversation import BROKE_OFF, STOPPED, Conversation
    from swebash_ai.commands.export import markdown_transcript

    conv = Conversation()
    for question, why in (("one", STOPPED), ("two", BROKE_OFF), ("three", None)):
        conv.add_user(question, typed=True)
        conv.add_assistant(f"half of {question}", incomplete=why)
    path = tmp_path / "s.jsonl"
    conv.save(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    old = [line.replace('"incomplete": "broke_off"', '"incomplete": true') for line in lines]
    assert old != lines
    path.write_text("\n".join(old) + "\n", encoding="utf-8")
    answers = markdown_transcript(conv).split("## Assistant")[1:]
    assert "*(The user stopped this answer here: it is incomplete.)*" in answers[0]
    assert "*(The model's stream broke off here: this answer is incomplete.)*" in answers[1]
    assert "incomplete" not in answers[2]
    saved_before = markdown_transcript(Conversation.load(path)).split("## Assistant")[1:]
    assert "*(This answer broke off here: it is incomplete.)*" in saved_before[1]
    assert "stopped" in saved_before[0] and "incomplete" not in saved_before[2]
