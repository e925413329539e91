"""The TUI's ``/context``: what the model is sent each request, by part, in estimated tokens."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from swebash_ai.session import Session


def context_report(session: Session) -> str:
    """What the model is sent each request, by part, in estimated tokens (the TUI's ``/context``)."""
    import json

    from swebash_ai.agent.conversation import estimate_tokens

    def tokens(text: str) -> int:
        return len(text) // 4

    instructions = session.instructions.render()
    system = tokens(session.system_prompt()) - tokens(instructions)
    tools = tokens(json.dumps(session.registry.definitions())) if len(session.registry) else 0
    sent = session.conversation.for_request(None, session.settings.context_tokens)
    history = sum(estimate_tokens(m) for m in sent)
    lines = ["Instruction files in force:"]
    lines += [f"  {f.path}" + (" (cut)" if f.cut else "") for f in session.instructions.files] or ["  (none)"]
    if not session.settings.project_instructions:
        lines[-1] += " - project_instructions is off"
    lines += [f"  ! {p}" for p in (*session.instructions.problems, *session.instructions.warnings)]
    if session.instructions.refused:
        lines += ["Instruction files refused (left out):"]
        lines += [f"  {r.path}: {r.reason}" for r in session.instructions.refused]
    total = system + tokens(instructions) + tools + history
    lines += [
        "",
        f"Token budget (estimated, context_tokens = {session.settings.context_tokens}):",
        f"  system prompt  {system:>8}",
        f"  instructions   {tokens(instructions):>8}",
        f"  tools          {tools:>8}",
        f"  history        {history:>8}  ({len(sent)} of {len(session.conversation.messages)} messages sent)",
        f"  total          {total:>8}",
    ]
    return "\n".join(lines)
