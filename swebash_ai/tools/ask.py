"""``ask_user``: the model asks the user a question and waits for the answer.

Contract:
    ``ask_user(question, options=[], allow_free_text=True)`` hands a :class:`Question` to the front end's
    asker (``ToolContext.ask_user``, set per call by the loop from the approver: the same injected seam as
    approvals; the loop never knows which front end answers). The result is the answer, or says the user
    dismissed the question. When nobody can answer (no terminal, ``--yes``, an MCP client without
    elicitation) it returns at once and tells the model to proceed on its own judgement or stop: it
    never waits for a person who is not there.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field

from swebash_ai.tools.registry import JSON, Tool, ToolContext, ToolResult, tool

__all__ = ["TOOLS", "Answer", "Asker", "Question", "ask_user", "nobody_can_answer"]

MAX_OPTIONS = 9
"""Options are chosen with the keys 1-9."""


@dataclass(frozen=True)
class Question:
    call_id: str
    question: str
    options: tuple[str, ...] = ()
    allow_free_text: bool = True


@dataclass(frozen=True)
class Answer:
    """``text`` is the answer (``None``: dismissed); ``option`` its 1-based number when an option was chosen;
    ``unavailable`` says why nobody could be asked (then nothing else is set)."""

    text: str | None = None
    option: int | None = None
    unavailable: str = ""


Asker = Callable[[Question], Awaitable[Answer]]


def nobody_can_answer(why: str) -> Answer:
    return Answer(unavailable=why)


def _describe(args: Any) -> str:
    question = " ".join(args.question.split())
    return "ask: " + (question if len(question) <= 100 else question[:99] + "…")


@tool("ask", describe=_describe, session_key=lambda _c, _a: None)
async def ask_user(
    ctx: ToolContext,
    question: Annotated[str, Field(min_length=1, max_length=2000)],
    options: Annotated[list[Annotated[str, Field(min_length=1, max_length=200)]], Field(max_length=MAX_OPTIONS)]
    | None = None,
    allow_free_text: bool = True,
) -> ToolResult | JSON:
    """Ask the user a question and wait for the answer, e.g. to choose between approaches.

    Use it only when a decision that is the user's to make blocks the task; otherwise make a sensible
    choice and say which. Offer short options when the choice is among known alternatives.

    Args:
        question: The question, in one or two sentences.
        options: Up to 9 short answers the user can pick (keys 1-9).
        allow_free_text: Whether the user may type an answer of their own instead of picking an option.
    """
    choices = tuple(options or ())
    if not choices and not allow_free_text:
        return ToolResult.error("Give options, or allow_free_text=true: otherwise the user cannot answer.")
    asker: Asker | None = ctx.ask_user
    answer = nobody_can_answer("no one is there to answer") if asker is None else await asker(
        Question(ctx.call_id, question, choices, allow_free_text)
    )
    if answer.unavailable:
        return ToolResult.denied(
            f"Nobody can answer questions here ({answer.unavailable}). Do not ask again: proceed with the most "
            "reasonable choice and say which you made, or stop and say what you need from the user.",
            metadata={"answered": False, "unavailable": answer.unavailable},  # the front end's short line
        )
    if answer.text is None:
        return ToolResult.success(
            "The user dismissed the question without answering. Proceed with your best judgement and say "
            "what you assumed, or stop and ask in your reply.",
            metadata={"answered": False},
        )
    if answer.option is not None:
        return ToolResult.success(f"The user chose option {answer.option}: {answer.text}",
                                  metadata={"answered": True, "option": answer.option})
    return ToolResult.success(f"The user answered: {answer.text}", metadata={"answered": True})


TOOLS: list[Tool] = [ask_user]
