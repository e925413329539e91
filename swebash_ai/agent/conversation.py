"""The conversation: OpenAI-format messages (litellm's lingua franca), kept valid, trimmed, saved as JSONL.

Invariants:
- every assistant ``tool_calls`` entry is answered by a ``tool`` message with its id before the next
  assistant or user message (:meth:`Conversation.repair` restores this after a crash or a cancel);
- trimming for a request drops whole old *turns* (a turn starts at a user message), so a tool call is never
  separated from its result, and cuts the oldest tool results of a turn too long alone
  (:mod:`~swebash_ai.agent.context_fit`); the full history stays on disk, and in memory but for the large tool
  results of earlier turns, which are set aside in an unnamed file and read back by whatever needs their text
  (:meth:`Conversation.set_aside_results`, :meth:`Conversation.full`, :mod:`~swebash_ai.agent.result_store`);
- a save never overwrites a turn it has not seen: two instances of the app that resumed the same session
  each keep their turns (the second to save forks a new session, see :meth:`Conversation.save`).

The token count is an estimate (about four characters a token): exact tokenizers are slow to import and
differ per provider, and the budget only needs to be safely below the model's context.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
import secrets
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, cast

from swebash_ai.agent.context_fit import fit
from swebash_ai.agent.image_store import ATTACHMENTS, IMAGES, ImageStore, image_cost
from swebash_ai.agent.result_store import ASIDE, ASIDE_CHARS, Aside, ResultStore
from swebash_ai.providers.base import Message, ToolCall
from swebash_ai.providers.wire import StoredResult
from swebash_ai.storage import private_files

INCOMPLETE = "incomplete"
"""Key of an assistant message whose answer did not reach its end; its value says why: :data:`STOPPED` or
:data:`BROKE_OFF` (``true`` in sessions saved before the reason was kept, see :func:`why_incomplete`). Kept in
the saved session, left out of requests."""

STOPPED: Final = "stopped"
"""Why an answer is incomplete: the user stopped it (Ctrl-C, Esc)."""

BROKE_OFF: Final = "broke_off"
"""Why an answer is incomplete: its stream broke off (a dropped connection, a server error)."""

UNSAID: Final = "unsaid"
"""Why an answer is incomplete, as read from a session saved before the reason was kept (``"incomplete": true``)."""

Incomplete = Literal["stopped", "broke_off"]
"""Why an answer did not reach its end, as :meth:`Conversation.add_assistant` records it."""

TYPED = "typed"
"""Key of a user message the user wrote (not a summary, not a ``!tool`` note): resuming trusts the URLs in
these alone (:mod:`swebash_ai.agent.provenance`). Kept in the saved session, left out of requests."""

NOTES = "app_notes"
"""Key of the lines the app told the model on a message (a background process exited, see
:meth:`Conversation.add_note`): kept apart from the content, so what the user typed and what a tool returned
stay as they were (resuming reads them, :mod:`swebash_ai.agent.provenance`), and appended to the content on
the wire. Kept in the saved session."""

USER_RAN = "user_ran"
"""Key of the user message that tells the model about a tool call the user ran themselves (``!command``): the
call (``id``, ``name``, ``arguments``, a JSON string) and ``typed``, the command line the user typed (absent for
a call that came from elsewhere). The content is what the model reads: a line naming the call, then its
result. Kept so that resuming shows the message as it was live (the command, and the call with its output in
the tool pane, see :func:`user_run`), and so that provenance trusts the typed command line alone, never the
output (:mod:`swebash_ai.agent.provenance`). Kept in the saved session, left out of requests."""

_OWN_KEYS = (INCOMPLETE, TYPED, NOTES, USER_RAN, IMAGES, ASIDE)  # references, see agent/image_store.py, result_store.py

TITLE_RULE = "title_rule"
"""Key of the session header saying how its ``title`` was made: ``"typed"`` (the first line the user typed). A
header without it was written by an older version, whose title was the whole first user message, piped input
and notes included: :func:`list_sessions` shows the title of today's rule for those (see :func:`_listed_title`).
"""

SAVE_LOCK = ".save.lock"
"""In a sessions folder: held (``flock``) while a session file is checked and written."""

CANCELLED_RESULT = "Cancelled: the user interrupted before this call finished; it may not have run."


def new_session_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


SESSION_ID_FORM: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")
"""What a session id (or the prefix of one) looks like: :func:`new_session_id`'s letters, never a path or a glob."""


def is_session_id(text: str) -> bool:
    """``text`` can name a saved session: no separator, dot, glob character or emptiness to leave the folder with."""
    return SESSION_ID_FORM.fullmatch(text) is not None


def _sanitized(call: dict[str, Any]) -> dict[str, Any]:
    """Keep invalid argument JSON out of the history: providers that re-parse it (Anthropic) would fail."""
    raw = call["function"]["arguments"]
    try:
        ok = isinstance(json.loads(raw), dict) if raw.strip() else False
    except json.JSONDecodeError:
        ok = False
    if not ok:
        call["function"]["arguments"] = json.dumps({"_invalid_arguments": raw[:2000]})
    return call


def _for_wire(message: Message) -> Message:
    """The message as providers get it: no keys of our own (strict servers refuse unknown fields), the app's
    notes appended to its content."""
    if not any(key in message for key in _OWN_KEYS):
        return message
    wire = {k: v for k, v in message.items() if k not in _OWN_KEYS}
    notes = message.get(NOTES)
    if notes and isinstance(wire.get("content"), str):
        wire["content"] = "\n\n".join([part for part in (wire["content"], *notes) if part])
    return wire


def as_sent(message: Message) -> Message:
    """``message`` as the model read it (the app's notes in its content, no keys of our own): for exports."""
    return _for_wire(message)


def estimate_tokens(message: Message) -> int:
    if (aside := message.get(ASIDE)) is not None:  # its text is not here: the estimate made before it went
        return int(aside.tokens)
    return len(json.dumps(message, ensure_ascii=False)) // 4 + 4 + image_cost(message.get(IMAGES))


@functools.lru_cache(maxsize=4)
def _system_cost(system: str | None) -> int:
    """The estimate of the system prompt's message: the same text for every request of a session (it was
    serialised again for each)."""
    return estimate_tokens({"role": "system", "content": system}) if system else 0


@dataclass
class Conversation:
    """Messages of one session (without the system prompt, which is added per request)."""

    messages: list[Message] = field(default_factory=list)
    id: str = field(default_factory=new_session_id)
    created: float = field(default_factory=time.time)
    meta: dict[str, Any] = field(default_factory=dict)
    _costs: list[int] = field(default_factory=list, repr=False, compare=False)
    """Token estimates of ``messages[:len(_costs)]``: messages are only ever appended, so each is costed once."""
    _sent: list[Message | None] = field(default_factory=list, repr=False, compare=False)
    """``messages[:len(_sent)]`` as providers get them (:func:`_for_wire`; ``None`` for a message with images,
    made each time): kept like ``_costs``, so a request of a long turn does not remake every message."""
    _starts: list[int] = field(default_factory=list, repr=False, compare=False)
    """Where the turns of ``messages[:_scanned]`` start (kept like ``_costs``: each message is looked at once)."""
    _scanned: int = field(default=0, repr=False, compare=False)
    _generation: int | None = field(default=None, repr=False, compare=False)
    """The save counter of this session's file as this instance last read or wrote it (``None``: not on disk)."""
    _pinned_title: str = field(default="", repr=False, compare=False)
    """The title saved before a compaction replaced the first messages (see :attr:`title`)."""
    images: ImageStore = field(default_factory=ImageStore, repr=False, compare=False)
    """The bytes of the images its messages refer to (the messages hold references, see :data:`IMAGES`)."""
    results: ResultStore = field(default_factory=ResultStore, repr=False, compare=False)
    """The text of the tool results set aside (:meth:`set_aside_results`; the messages hold an :data:`ASIDE`)."""
    _aside_scanned: int = field(default=0, repr=False, compare=False)
    """``messages[:_aside_scanned]`` were looked at by :meth:`set_aside_results` (each message once)."""

    def _wire_forms(self) -> list[Message | None]:
        if len(self._sent) > len(self.messages):
            self._sent.clear()
        self._sent.extend(None if m.get(IMAGES) or ASIDE in m else _for_wire(m)
                          for m in self.messages[len(self._sent):])
        return self._sent

    def _wire(self, message: Message) -> Message:
        """A message :meth:`_wire_forms` does not keep, made for one request: its images, or its text read back."""
        if ASIDE in message:
            return _for_wire(self.full(message))
        return self.images.wire(_for_wire(message), message[IMAGES])

    def _stored(self, message: Message) -> Message:
        """As :meth:`_wire`, but a result set aside (with no note added to it) stays in the store."""
        aside = message.get(ASIDE)
        if aside is None or message.get(NOTES):
            return self._wire(message)
        stored = StoredResult(_for_wire(message), aside.size, functools.partial(self.results.read_into, aside),
                              functools.partial(self.results.get, aside))
        # A read-only mapping where a message dict goes: only a provider that reads_stored_results is given one.
        return cast(Message, stored)

    # --- results set aside ----------------------------------------------------------------------------
    def full(self, message: Message) -> Message:
        """``message`` with its content: a copy with the text read back when it was set aside, else itself."""
        aside = message.get(ASIDE)
        if aside is None:
            return message
        whole = {k: v for k, v in message.items() if k != ASIDE}
        whole["content"] = self.results.get(aside)
        return whole

    def full_messages(self, stop: int | None = None) -> Iterator[Message]:
        """The messages (up to index ``stop``) with their content, read back one at a time (see :meth:`full`)."""
        return map(self.full, self.messages[:stop])

    def tool_result(self, call_id: str) -> str | None:
        """The text of the result of call ``call_id`` (read back when set aside), ``None`` if it has none."""
        for message in reversed(self.messages):
            if message.get("role") == "tool" and message.get("tool_call_id") == call_id:
                content = self.full(message).get("content")
                return content if isinstance(content, str) else None
        return None

    def set_aside_results(self) -> list[str]:
        """Move the text of the large tool results of every turn but the last (the one that just ran, which the
        front ends still show) to :attr:`results`, leaving an :data:`ASIDE` in each message; returns the ids of
        the calls whose results went. A result that cannot be written stays (see :class:`ResultStore`)."""
        bounds = self._turn_bounds()
        end = bounds[-1][0] if bounds else 0
        costs = self._token_costs()
        moved: list[str] = []
        for i in range(min(self._aside_scanned, end), end):
            message = self.messages[i]
            content = message.get("content")
            if message.get("role") != "tool" or not isinstance(content, str) or len(content) < ASIDE_CHARS:
                continue  # a message set aside has no content
            where = self.results.put(content)
            if where is None:
                return moved  # looked at again after the next turn
            # A new dict: a request still being sent (a save while a turn is cancelled) keeps the one it has.
            self.messages[i] = {**{k: v for k, v in message.items() if k != "content"},
                                ASIDE: Aside(where[0], where[1], costs[i])}
            if i < len(self._sent):
                self._sent[i] = None
            moved.append(str(message.get("tool_call_id", "")))
        self._aside_scanned = end
        self._set_aside_children()
        return moved

    def _set_aside_children(self) -> None:
        """The helpers' transcripts (``meta["subagents"]``, a whole child conversation each, read by nothing
        while the session runs) go to the store too, each as one :class:`Aside`; see :meth:`subagents`."""
        kept = self.meta.get("subagents")
        if not isinstance(kept, dict):
            return
        for call_id, record in kept.items():
            if isinstance(record, dict) and (where := self.results.put(record)) is not None:
                kept[call_id] = Aside(where[0], where[1], 0)

    def subagents(self) -> dict[str, Any]:
        """The helpers' transcripts by the parent's ``task`` call id, each read back if it was set aside."""
        kept = self.meta.get("subagents")
        if not isinstance(kept, dict):
            return {}
        return {call_id: self.results.load(record) if isinstance(record, Aside) else record
                for call_id, record in kept.items()}

    def _token_costs(self) -> list[int]:
        if len(self._costs) > len(self.messages):  # the list was replaced or cut: start over
            self._costs.clear()
        self._costs.extend(estimate_tokens(m) for m in self.messages[len(self._costs) :])
        return self._costs

    # --- building -------------------------------------------------------------------------------------
    def add_user(self, content: str, *, typed: bool = False) -> None:
        """``typed``: the user wrote ``content`` (see :data:`TYPED`); notes the app adds in the user's name are not."""
        msg: Message = {"role": "user", "content": content}
        if typed and (refs := self.images.take_pending()):
            msg[IMAGES] = refs
        if typed:
            msg[TYPED] = True
        self.messages.append(msg)

    def add_user_run(self, call: ToolCall, result: str, *, typed: str | None = None) -> None:
        """Tell the model about ``call``, which the user ran themselves, and its ``result`` (see :data:`USER_RAN`);
        ``typed``: the command line the user typed for it."""
        ran: dict[str, str] = {"id": call.id, "name": call.name, "arguments": call.arguments}
        if typed is not None:
            ran["typed"] = typed
        self.messages.append({"role": "user", "content": _run_note(call.name, call.arguments) + result, USER_RAN: ran})

    def add_assistant(
        self, content: str, tool_calls: Sequence[ToolCall] = (), *, incomplete: Incomplete | None = None
    ) -> None:
        """``incomplete``: why the answer did not reach its end (:data:`STOPPED`, :data:`BROKE_OFF`); saved with
        the message (see :data:`INCOMPLETE`), never sent."""
        msg: Message = {"role": "assistant", "content": content or None}
        if incomplete is not None:
            msg[INCOMPLETE] = incomplete
        if tool_calls:
            msg["tool_calls"] = [_sanitized(c.to_message()) for c in tool_calls]
        elif not content:
            msg["content"] = ""
        self.messages.append(msg)

    def note_for_next_turn(self, note: str) -> None:
        """Keep ``note`` (what the model must hear, e.g. that undo put files back) for the next user turn; saved
        with the session, so it survives a restart (see :meth:`take_note`)."""
        notes = [self.meta.get("undo_note"), note]  # the key predates other notes: kept for saved sessions
        self.meta["undo_note"] = "\n".join(n for n in notes if n)

    def take_note(self) -> str | None:
        """The notes kept by :meth:`note_for_next_turn`, once."""
        note = self.meta.pop("undo_note", None)
        return note if isinstance(note, str) else None

    def add_tool_result(self, call_id: str, name: str, content: str) -> None:
        self.messages.append({"role": "tool", "tool_call_id": call_id, "name": name, "content": content})

    def add_note(self, text: str) -> None:
        """Tell the model ``text`` in the next request, on the last message of the conversation.

        At the start of a request the last message is the user's new message or the last tool result. A
        message of its own would break what some servers require: a user message right after a user message
        is refused by chat templates that want the roles to alternate, a system message in the middle by
        those that want it first, and a tool message needs a call. So the note rides on the last message,
        under :data:`NOTES` (see there). Only an empty conversation, or one ending with an answer, gets a
        user message of its own, which is then valid everywhere: its content is empty and the note is under
        :data:`NOTES` all the same (see :func:`is_note_only`), so that nothing reads it as the user's words."""
        last = self.messages[-1] if self.messages else None
        if last is None or last.get("role") not in ("user", "tool") or not isinstance(last.get("content"), str):
            self.messages.append({"role": "user", "content": "", NOTES: [text]})
            return
        last.setdefault(NOTES, []).append(text)
        del self._costs[len(self.messages) - 1 :]  # its token estimate grew
        del self._sent[len(self.messages) - 1 :]

    def truncate(self, length: int) -> None:
        """Drop every message from index ``length`` on (undo a failed attempt)."""
        del self.messages[length:]
        del self._costs[length:]
        del self._sent[length:]
        self._scanned = 0  # looked at again (once)
        self._aside_scanned = min(self._aside_scanned, length)

    def replace_head(self, cut: int, messages: Sequence[Message]) -> None:
        """Replace ``messages[:cut]`` (compaction by summary); token estimates are recomputed."""
        self._pinned_title = self.title  # the question the session began with is about to go
        self.messages[:cut] = list(messages)
        self._costs.clear()
        self._sent.clear()
        self._scanned = 0
        self._aside_scanned = 0

    # --- invariants -----------------------------------------------------------------------------------
    def unanswered_calls(self) -> list[tuple[str, str]]:
        """(id, name) of tool calls in the last assistant message that have no result yet."""
        for i in range(len(self.messages) - 1, -1, -1):
            msg = self.messages[i]
            if msg.get("role") == "assistant":
                answered = {m.get("tool_call_id") for m in self.messages[i + 1 :] if m.get("role") == "tool"}
                return [
                    (c["id"], c["function"]["name"]) for c in msg.get("tool_calls") or () if c["id"] not in answered
                ]
            if msg.get("role") == "user":
                return []
        return []

    def repair(self, content: str = CANCELLED_RESULT) -> int:
        """Give every unanswered tool call a result; returns how many were added."""
        missing = self.unanswered_calls()
        for call_id, name in missing:
            self.add_tool_result(call_id, name, content)
        return len(missing)

    def is_valid(self) -> bool:
        pending: set[str] = set()
        for msg in self.messages:
            role = msg.get("role")
            if role in ("user", "assistant") and pending:
                return False
            if role == "assistant":
                pending = {c["id"] for c in msg.get("tool_calls") or ()}
            elif role == "tool":
                if msg.get("tool_call_id") not in pending:
                    return False
                pending.discard(msg["tool_call_id"])
        return not pending

    # --- requests -------------------------------------------------------------------------------------
    def turns(self) -> list[list[Message]]:
        return [self.messages[a:b] for a, b in self._turn_bounds()]

    def _turn_bounds(self) -> list[tuple[int, int]]:
        messages, starts = self.messages, self._starts
        if self._scanned > len(messages) or not self._scanned:  # cut or replaced: start over
            starts.clear()
            self._scanned = 0
        starts.extend(i for i in range(self._scanned, len(messages)) if i == 0 or messages[i].get("role") == "user")
        self._scanned = len(messages)
        return list(zip(starts, [*starts[1:], len(messages)][: len(starts)], strict=True))

    def for_request(self, system: str | None, budget_tokens: int, *, stored: bool = False) -> list[Message]:
        """System prompt + the most recent whole turns that fit ``budget_tokens``; the last turn always, its oldest
        tool results cut when it outgrows the budget alone (:mod:`swebash_ai.agent.context_fit`). With ``stored``
        (for a provider that ``reads_stored_results``), the results set aside stay where they are, each a
        :class:`~swebash_ai.providers.wire.StoredResult` the request body copies them from; otherwise each is
        read back."""
        head: list[Message] = [{"role": "system", "content": system}] if system else []
        allowed = budget = budget_tokens - _system_cost(system)
        costs = self._token_costs()
        first = len(self.messages)
        for start, end in reversed(self._turn_bounds()):
            cost = sum(costs[start:end])
            if first < len(self.messages) and cost > budget:
                break
            first = start
            budget -= cost
        wire = self._wire_forms()
        made = self._stored if stored else self._wire
        sent = [w if w is not None else made(m) for m, w in zip(self.messages[first:], wire[first:], strict=True)]
        return head + (fit(sent, costs[first:], allowed) if budget < 0 else sent)

    @property
    def title(self) -> str:
        """The first line the user typed: what the app adds to a message (piped input, attachments, an undo
        note) is not the user's question, and a summary replacing the first turns keeps the title it had."""
        if self._pinned_title and self.meta.get("compactions"):
            return self._pinned_title
        users = [m for m in self.messages if m.get("role") == "user" and isinstance(m.get("content"), str)
                 and not is_note_only(m)]
        for message in users:  # the first thing typed: a question, or a `!command` the user ran
            if message.get(TYPED):
                return title_of(message["content"])
            if (run := user_run(message)) is not None and run.typed is not None:  # older records: not known
                return title_of(run.shown)
        return title_of(users[0]["content"]) if users else "(empty)"  # saved before the mark: any user message

    # --- files ----------------------------------------------------------------------------------------
    def save(self, path: Path) -> str | None:
        """Write the whole session atomically, readable by its owner alone: a crash, a full disk or a kill
        mid-write leaves the previous file intact.

        Another instance of the app may have resumed the same session and saved a turn of its own since this
        one read or wrote the file (the file's ``generation`` counter moved on). Overwriting would silently
        drop that turn, and merging two diverging histories has no sound answer, so this conversation is
        saved as a new session instead, forked from the other (``meta.forked_from``), and goes on under the
        new id. Returns the one line to tell the user when that happens, else ``None``. The check and the
        write happen under an advisory lock on the folder's :data:`SAVE_LOCK`, so no save slips between them.
        """
        notice = None
        with private_files.locked(path.parent / SAVE_LOCK):
            on_disk = _generation_of(path)
            if on_disk is not None and on_disk != self._generation:
                parent = self.id
                while path.exists():
                    self.id = new_session_id()
                    path = path.with_name(f"{self.id}.jsonl")
                self.meta["forked_from"] = parent
                self._generation = None
                notice = (f"Session {parent} was saved by another swebash-ai meanwhile; this conversation is saved "
                          f"as a new session {self.id}, forked from it, so neither loses a turn.")
            generation = (self._generation or 0) + 1
            meta = {"id": self.id, "created": self.created, "updated": time.time(), "title": self.title,
                    **self.meta, TITLE_RULE: "typed", "generation": generation}
            if "subagents" in meta:
                meta["subagents"] = self.subagents()
            self.images.save(path.parent / ATTACHMENTS, self.messages)  # before the file that refers to them
            if self.results.folder is None:  # results set aside go beside the session files, on the same disk
                self.results.folder = path.parent
            # One line at a time: a long session is never held twice more in memory (lines, joined, encoded);
            # a result set aside is read back for its line alone.
            lines = (json.dumps(obj, ensure_ascii=False).encode("utf-8") + b"\n"
                     for obj in itertools.chain(({"meta": meta},), self.full_messages()))
            private_files.write_file(path, lines)  # what the model read: 0600
            self._generation = generation
        return notice

    @classmethod
    def load(cls, path: Path) -> Conversation:
        """Read a saved session; a torn last line is skipped and unanswered calls are repaired."""
        messages: list[Message] = []
        meta: dict[str, Any] = {}
        with path.open(encoding="utf-8", errors="replace") as fh:  # a damaged line is skipped, not fatal
            for line in fh:
                line = line.strip()
                if not line:
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(obj, dict) and "meta" in obj and "role" not in obj:
                    meta = dict(obj["meta"])
                elif isinstance(obj, dict) and "role" in obj:
                    messages.append(obj)
        conv = cls(
            messages=messages,
            id=str(meta.pop("id", path.stem)),
            created=float(meta.pop("created", path.stat().st_mtime)),
        )
        meta.pop("updated", None)
        meta.pop(TITLE_RULE, None)
        saved_title = meta.pop("title", "")
        generation = meta.pop("generation", 0)  # a file of an older version has no counter: 0
        conv._generation = generation if isinstance(generation, int) else -1
        conv.meta = meta
        conv.images.folder = path.parent / ATTACHMENTS
        conv.results.folder = path.parent
        conv._pinned_title = saved_title if isinstance(saved_title, str) else ""
        _notes_apart(messages)
        _runs_apart(messages)
        conv.repair()
        return conv


def is_note_only(message: Message) -> bool:
    """Whether ``message`` is a user message the app made to carry its notes (:meth:`Conversation.add_note`),
    with nothing the user wrote: front ends show its notes as notices, never as the user's text."""
    return message.get("role") == "user" and message.get("content") == "" and bool(message.get(NOTES))


def why_incomplete(message: Message) -> str | None:
    """Why the answer in ``message`` did not reach its end: :data:`STOPPED`, :data:`BROKE_OFF`, or :data:`UNSAID`
    (saved before the reason was kept, or by a version that knew another); None for a whole answer."""
    why = message.get(INCOMPLETE)
    if not why:
        return None
    return why if why in (STOPPED, BROKE_OFF) else UNSAID


_OLD_NOTE_HEAD = "[swebash-ai] "
"""How the notes the app gave the model in a message of their own begin (background exits)."""


def _notes_apart(messages: list[Message]) -> None:
    """Put the note of a message of its own, as a version before :func:`is_note_only` saved it (the note as
    the content), under :data:`NOTES`: resumed, it is shown as the note it was, not as if typed.

    Only in a conversation that marks what was typed (:data:`TYPED`, older than any such note), and only an
    untyped user message that reads like the app's note: the user's own text is never taken for a note."""
    if not any(m.get(TYPED) for m in messages):
        return
    for i, msg in enumerate(messages):
        content = msg.get("content")
        if (msg.get("role") == "user" and not msg.get(TYPED) and not msg.get(NOTES) and isinstance(content, str)
                and content.startswith(_OLD_NOTE_HEAD)):
            messages[i] = {**msg, "content": "", NOTES: [content]}


def _run_note(name: str, arguments: str) -> str:
    return f"[I ran {name} {arguments} myself; result follows]\n"


_OLD_RUN = re.compile(r"\[I ran (\w+) (\{[^\n]*\}) myself; result follows\]\n")
"""The first line of a ``!command`` message as :func:`_run_note` writes it (arguments are one line of JSON)."""


@dataclass(frozen=True)
class UserRun:
    """A tool call the user ran themselves, as a user message records it (:data:`USER_RAN`)."""

    call_id: str
    name: str
    arguments: str
    typed: str | None
    """The command line the user typed (``None``: not known, as in a session saved before it was kept)."""
    output: str
    """The result as the model read it."""

    @property
    def shown(self) -> str:
        """The line as the user typed it: ``!`` and the command."""
        if self.typed is not None:
            return f"!{self.typed}"
        try:
            args = json.loads(self.arguments)
        except ValueError:
            args = None
        command = args.get("command") if isinstance(args, dict) and self.name == "run_command" else None
        return f"!{command}" if isinstance(command, str) else f"!{self.name} {self.arguments}"


def user_run(message: Message) -> UserRun | None:
    """The tool call the user ran that ``message`` tells the model about (``!command``), or ``None``."""
    ran, content = message.get(USER_RAN), message.get("content")
    if message.get("role") != "user" or not isinstance(ran, dict) or not isinstance(content, str):
        return None
    fields = [ran.get(k) for k in ("id", "name", "arguments")]
    typed = ran.get("typed")
    if not all(isinstance(f, str) for f in fields) or not isinstance(typed, str | None):
        return None  # a damaged record: shown as the text it is
    call_id, name, arguments = (str(f) for f in fields)
    head = _run_note(name, arguments)
    return UserRun(call_id, name, arguments, typed, content.removeprefix(head))


def _runs_apart(messages: list[Message]) -> None:
    """Give a ``!command`` message saved before :data:`USER_RAN` existed its record, so it resumes as the command
    it was. Without ``typed``: what an older file says was typed is not known, so provenance trusts none of it.

    Only in a conversation that marks what was typed (:data:`TYPED`), and only an untyped user message that
    begins with the line the app wrote: the user's own text is never taken for a command's note."""
    if not any(m.get(TYPED) for m in messages):
        return
    for i, msg in enumerate(messages):
        content = msg.get("content")
        if msg.get("role") != "user" or msg.get(TYPED) or USER_RAN in msg or not isinstance(content, str):
            continue
        head = _OLD_RUN.match(content)
        if head is not None:
            ran = {"id": f"user_saved_{i}", "name": head.group(1), "arguments": head.group(2)}
            messages[i] = {**msg, USER_RAN: ran}


_APP_NOTE = re.compile(r"\A\s*\[Note: .*?\]\s*?\n\s*\n", re.DOTALL)
"""An undo note an older version put in front of the user's text (now it rides under :data:`NOTES`)."""


def title_of(content: str) -> str:
    """A session's title from its first user message: the first line of what was typed, at most 60 characters.

    The app adds its context after the typed text, past a blank line (piped input, ``@file`` attachments), or
    in front of it as a ``[Note: ...]`` paragraph (undo): the first line after any such note is the user's own.
    """
    while (note := _APP_NOTE.match(content)) is not None:
        content = content[note.end():]
    first = next((line for line in content.splitlines() if line.strip()), "")
    first = " ".join(first.split())
    return (first[:60] + ("…" if len(first) > 60 else "")) or "(empty)"


def _generation_of(path: Path) -> int | None:
    """The save counter in the header of the session file ``path``: ``None`` when there is no file, -1 when
    its header cannot be read (a file we cannot read is never overwritten)."""
    try:
        with path.open("rb") as fh:
            header = fh.readline()
    except FileNotFoundError:
        return None
    except OSError:
        return -1
    try:
        generation = json.loads(header)["meta"].get("generation", 0)
    except (ValueError, KeyError, TypeError, AttributeError):
        return -1
    return generation if isinstance(generation, int) else -1
