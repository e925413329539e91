"""The chat pane: user messages, streamed assistant Markdown, notices and errors, each visually distinct.

Messages and reply segments are kept in :class:`Chapter` containers of at most :data:`CHAPTER_SIZE`, so the
work of a re-layout does not grow with the conversation (see :class:`Chapter`); a reply being streamed is
written by a :class:`~swebash_ai.frontends.tui.widgets.stream.ReplyStream`.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from textual.actions import SkipAction
from textual.containers import VerticalScroll
from textual.content import Content
from textual.geometry import Size
from textual.reactive import Reactive
from textual.widget import AwaitMount, Widget
from textual.widgets import Static

from swebash_ai.frontends.tui.commands import help_text
from swebash_ai.frontends.tui.widgets.earlier import MOUNTED_CHAPTERS, SHOW_MORE, Blueprint, EarlierMessages
from swebash_ai.frontends.tui.widgets.stream import ReplyStream
from swebash_ai.safety.terminal_text import removed_note, safe

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from swebash_ai.frontends.tui.widgets.reply import AssistantMessage

CHAPTER_SIZE = 12
"""Most messages (or reply segments) in one :class:`Chapter`."""
FOLD_BEYOND = 3
"""A chapter this many view heights away from the view is folded (see :class:`Chapter`)..."""
UNFOLD_WITHIN = 2
"""...and unfolded again once it comes this close (a margin, so it is drawn before it shows)."""
RESUMED_CHAPTERS = 2
"""Chapters of a resumed conversation mounted for its first frame (its newest: a screenful and more); the
older ones wait as blueprints behind the "earlier messages" line (see :meth:`ChatPane.resuming`)."""

class UserMessage(Static):
    """What the user typed."""


class NoticeMessage(Static):
    """Something the user should know that is not part of an answer (a retry, a limit, a cancel)."""


class ErrorMessage(Static):
    """An error, with its title, message and hint."""


class InfoMessage(Static):
    """Help and other app-generated text (/help, no-provider instructions, /tools)."""


class HelpMessage(InfoMessage):
    """The /help text, laid out again for the width it is given: a description that wraps stays in its
    column instead of running back under the command names."""

    def __init__(self, custom: Sequence[tuple[str, str]] = (), notes: Sequence[str] = ()) -> None:
        super().__init__()
        self.custom = tuple(custom)
        self.notes = tuple(notes)

    def render(self) -> Content:
        return Content(help_text(self.content_region.width or 100, self.custom, self.notes))


class StoredMessage:
    """A blueprint of a message: its class and what it was made with. A session stores one per message for as
    long as it runs, so this is a small object with slots (a closure over the same was five times its size)."""

    __slots__ = ("classes", "content", "kind", "span")

    def __init__(self, kind: Callable[..., Widget], content: object, classes: str,
                 span: tuple[int, int] | None = None) -> None:
        self.kind, self.content, self.classes, self.span = kind, content, classes, span

    def __call__(self) -> Widget:
        from swebash_ai.frontends.tui.widgets.reply import AssistantMessage

        if self.kind is AssistantMessage:
            assert isinstance(self.content, str)
            return AssistantMessage(self.content, classes=self.classes, span=self.span)
        content = self.content
        if isinstance(content, str):  # stored as its plain text (see blueprint)
            content = Content(content)
        return self.kind(content, classes=self.classes)


def blueprint(widget: Widget) -> Blueprint | None:
    """How to build ``widget`` again, or ``None`` for a kind of message that cannot be stored."""
    from swebash_ai.frontends.tui.widgets.reply import AssistantMessage

    classes = " ".join(sorted(widget.classes))
    if isinstance(widget, HelpMessage):
        custom, notes = widget.custom, widget.notes
        return lambda: HelpMessage(custom, notes)
    if isinstance(widget, AssistantMessage):
        source, span = widget.shared_source  # the conversation's copy of the text, once shared
        return StoredMessage(AssistantMessage, source, classes, span)
    kind = type(widget)
    if kind in (UserMessage, NoticeMessage, ErrorMessage, InfoMessage):
        assert isinstance(widget, Static)
        content = widget.content
        if isinstance(content, Content) and not content.spans:
            content = content.plain  # plain text (a question): the string, not a Content around it
        return StoredMessage(kind, content, classes)
    return None


class Chapter(Widget):
    """Up to :data:`CHAPTER_SIZE` consecutive messages of the chat, folded while far from the view.

    Every re-layout walks every displayed widget of the screen (Textual arranges the whole tree, not just
    what shows). A conversation of 400 messages made each flush of a streamed reply cost 75-85 ms (median;
    over 300 ms at the 90th percentile), and it grew with every message. A folded chapter keeps its height
    (the scroll bar and position do not move) but its messages are not displayed, so re-layouts skip them;
    its assistant messages drop their rendered lines (memory that grew with the session) and render
    them again when it unfolds.
    """

    DEFAULT_CSS = """
    Chapter {
        height: auto;
        layout: vertical;
    }
    Chapter.-folded > * {
        display: none;
    }
    Chapter.-shelved {
        display: none;
    }
    """

    virtual_size = Reactive(Size(0, 0), layout=False)
    """Not a second layout pass when it changes (see ``AssistantMessage.virtual_size``)."""

    _kept = 0
    stored = False
    """Its messages were turned into blueprints and it is being removed (see ``ChatPane._store_oldest``)."""

    @property
    def kept_height(self) -> int:
        """The height kept while folded."""
        return self._kept

    @property
    def folded(self) -> bool:
        return self.has_class("-folded")

    def fold(self) -> None:
        """Keep the current height, stop displaying the messages."""
        height = self.outer_size.height
        if not self.folded and height:
            self._kept = height
            self.styles.height = height
            self.add_class("-folded")
            for message in self.children:  # their rendered lines, rendered again when unfolded
                release = getattr(message, "release_lines", None)
                if release is not None:
                    release()

    def unfold(self) -> None:
        self.unshelve()
        if self.folded:
            self.remove_class("-folded")
            self.styles.height = "auto"

    @property
    def shelved(self) -> bool:
        return self.has_class("-shelved")

    def shelve(self) -> None:
        """Not even arranged: a folded chapter in the run at the top that the pane's :class:`Shelf` stands for."""
        if self.folded:
            self.add_class("-shelved")

    def unshelve(self) -> None:
        self.remove_class("-shelved")


class Shelf(Widget):
    """The first child of the chat pane: as tall as the folded chapters at the top, which are not displayed at
    all (see :meth:`ChatPane.update_folds`). A folded chapter is still a widget every layout pass arranges;
    a thousand-message session has some ninety of them, over a third of the screen's widgets."""

    DEFAULT_CSS = """
    Shelf {
        height: 0;
    }
    """


class FollowingScroll(VerticalScroll):
    """Top-aligned while the content fits; once it overflows, stays scrolled to the end (until the user
    scrolls up, and again when they scroll back down)."""

    def watch_virtual_size(self, size: Size) -> None:
        if not self.is_anchored and size.height > self.scrollable_content_region.height:
            self.anchor()

    # Home and End jump, as in a pager: an animated scroll over a long session took about a second, every
    # step of it a layout pass (and chapters unfolding on the way).
    def action_scroll_home(self) -> None:
        if not self.allow_vertical_scroll:
            raise SkipAction
        self.scroll_home(animate=False)

    def action_scroll_end(self) -> None:
        if not self.allow_vertical_scroll:
            raise SkipAction
        self.scroll_end(animate=False)


class ChatPane(FollowingScroll):
    """The conversation, newest at the bottom."""

    can_focus = True

    virtual_size = Reactive(Size(0, 0), layout=False)
    """Textual lays the screen out again when a widget's virtual size changes, in case it scrolls; the chat
    is laid out, anchored to its end and its scroll bar updated in the pass that changed it, so that
    second pass (15-30 ms while a reply streams) would find nothing to move."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._stream: ReplyStream | None = None
        self._last_reply: list[AssistantMessage] = []
        self._unshared: list[list[AssistantMessage]] = []  # replies streamed since share_replies, their segments
        self._folds_scheduled = False
        self._folded_at_width = 0
        self._shelf: Shelf | None = None
        self._stored: list[list[Blueprint]] = []  # the oldest chapters, as blueprints (see widgets/earlier.py)
        self._earlier: EarlierMessages | None = None
        self._allowance = MOUNTED_CHAPTERS
        self._pending: list[Widget | Blueprint] | None = None  # a conversation being resumed (see resuming())
        self._showing = False  # stored chapters are being mounted because the view reached the top

    # --- folding chapters far from the view -----------------------------------------------------------
    def watch_scroll_y(self, old: float, new: float) -> None:
        """The user scrolls: unfold what comes near before it is drawn (the heights are unchanged); near the
        top, mount the stored chapters above (unless the "earlier" line has the focus: Enter is the user's)."""
        super().watch_scroll_y(old, new)
        self.update_folds()
        view = self.scrollable_content_region.height
        if (self._stored and new < old and new < view and not self._showing
                and not (self._earlier is not None and self._earlier.has_focus)):
            self._showing = True
            self.app.call_after_refresh(self._show_earlier_in_place)  # the pane may be busy mounting

    def watch_virtual_size(self, size: Size) -> None:  # the content grows (following it does not call the above)
        super().watch_virtual_size(size)
        self._folds_due()

    def on_resize(self) -> None:
        width = self.scrollable_content_region.width
        if width != self._folded_at_width:  # wrapped at another width, the kept heights are wrong
            self._folded_at_width = width
            for chapter in self.query_children(Chapter):
                chapter.unfold()
            self._set_shelf(0)
        self._folds_due()

    def _folds_due(self) -> None:
        if not self._folds_scheduled:
            self._folds_scheduled = True
            self.call_after_refresh(self.update_folds)

    def update_folds(self) -> None:
        """Fold the chapters far from the view, unfold those near it; the last one always stays open (it
        may be growing)."""
        self._folds_scheduled = False
        if not self.is_mounted:
            return
        view = self.scrollable_content_region.height
        if not view:
            return
        top, bottom = self.scroll_y, self.scroll_y + view
        chapters = list(self.query_children(Chapter))
        y = 0  # where a shelved chapter is: the shelf is at the top and stands for them in order
        shelved = 0  # chapters[:shelved]: the run of folded chapters at the top, far above the view
        for index, chapter in enumerate(chapters[:-1]):
            if chapter.shelved:
                start, end = y, y + chapter.kept_height
            else:
                region = chapter.virtual_region
                start, end = region.y, region.bottom
            y = end
            if end >= top - UNFOLD_WITHIN * view and start <= bottom + UNFOLD_WITHIN * view:
                chapter.unfold()
            elif end < top - FOLD_BEYOND * view or start > bottom + FOLD_BEYOND * view:
                chapter.fold()
            if shelved == index and chapter.folded and end < top - FOLD_BEYOND * view:
                shelved = index + 1
        height = 0
        for index, chapter in enumerate(chapters):
            if index < shelved:
                chapter.shelve()
                height += chapter.kept_height
            else:
                chapter.unshelve()
        if chapters:
            chapters[-1].unfold()
        self._set_shelf(height)

    def _set_shelf(self, height: int) -> None:
        """The shelf as tall as the shelved chapters (mounted the first time there are any)."""
        if self._shelf is None:
            if not height:
                return
            self._shelf = Shelf()
            if self._earlier is not None:
                self.mount(self._shelf, after=self._earlier)
            else:
                self.mount(self._shelf, before=0)
        if self._shelf.styles.height is None or self._shelf.styles.height.value != height:
            self._shelf.styles.height = height

    # --- the list of messages -------------------------------------------------------------------------
    def append(self, widget: Widget) -> AwaitMount:
        """Add a message (or a reply segment) at the end of the conversation, above a streamed reply's
        unfinished tail; await the result to wait until it is mounted."""
        if self._pending is not None:
            self._pending.append(widget)
            return AwaitMount(self, [])
        chapters = self.query_children(Chapter)
        chapter = chapters.last() if chapters else None
        if chapter is None or len(chapter.children) >= CHAPTER_SIZE:
            chapter = Chapter()
            self.mount(chapter, before=self._stream.tail_widget if self._stream is not None else None)
        self._store_oldest()
        return chapter.mount(widget)

    # --- the oldest chapters as blueprints (widgets/earlier.py) ---------------------------------------
    def _store_oldest(self) -> None:
        """Beyond the allowance, turn the oldest chapters into blueprints, while nobody reads up there."""
        chapters = [c for c in self.query_children(Chapter) if not c.stored]  # removal is not immediate
        if self.max_scroll_y and self.scroll_y < self.max_scroll_y - 1:
            return  # someone reads up there
        # Back at the end: chapters the user asked to see again go back behind the line (memory stays bounded).
        self._allowance = MOUNTED_CHAPTERS
        if len(chapters) <= self._allowance:
            return
        stored = 0
        for chapter in chapters[: len(chapters) - self._allowance]:
            prints = [blueprint(message) for message in chapter.children]
            if any(p is None for p in prints) or not prints:
                break  # a message that cannot be built again: keep it, and everything after it
            self._stored.append([p for p in prints if p is not None])
            chapter.stored = True
            chapter.remove()
            stored += 1
        if stored:
            self._show_count()
            self._folds_due()

    def _show_count(self) -> None:
        count = sum(len(chapter) for chapter in self._stored)
        if not count:
            if self._earlier is not None:
                self._earlier.remove()
                self._earlier = None
            return
        if self._earlier is None:
            self._earlier = EarlierMessages()
            self.mount(self._earlier, before=0)
        self._earlier.set_count(count)

    @contextlib.contextmanager
    def resuming(self) -> Iterator[None]:
        """Messages added meanwhile (a resumed conversation) are laid out at the end: only the newest
        :data:`RESUMED_CHAPTERS` chapters are mounted, the older ones are stored as blueprints at once.

        Mounting a thousand messages (and storing most of them again) took 1.4 s before the first frame of
        a resumed session; a screenful takes a few milliseconds. Every message stays reachable: scrolling
        up to the top, or Enter on the "earlier" line, mounts the stored chapters (see ``show_earlier``).
        """
        self._pending = []
        try:
            yield
        finally:
            widgets, self._pending = self._pending, None
            self._load(widgets)

    def _load(self, pending: list[Widget | Blueprint]) -> None:
        groups = [pending[i:i + CHAPTER_SIZE] for i in range(0, len(pending), CHAPTER_SIZE)]
        mounted = [c for c in self.query_children(Chapter) if not c.stored]
        # What is stored comes before everything mounted: the chapters already there (start-up notices)
        # are stored with the resumed ones, or nothing is (a message that cannot be built again).
        prints = [[blueprint(m) for m in chapter.children] for chapter in mounted]
        for group in groups[:-RESUMED_CHAPTERS] if self._stream is None else ():
            prints.append([blueprint(w) if isinstance(w, Widget) else w for w in group])
        complete = [[p for p in chapter if p is not None] for chapter in prints if chapter and None not in chapter]
        if len(complete) != len(prints) or len(complete) == len(mounted):
            complete, stored_groups = [], 0  # mount everything, as appended one by one
        else:
            stored_groups = len(prints) - len(mounted)
            for chapter in mounted:
                chapter.stored = True
                chapter.remove()
        before = self._stream.tail_widget if self._stream is not None else None
        if complete:
            self._stored.extend(complete)
            self._show_count()
        for group in groups[stored_groups:]:  # children mounted at once: a message appended next goes after them
            chapter = Chapter()
            self.mount(chapter, before=before)
            chapter.mount_all([w if isinstance(w, Widget) else w() for w in group])
        self._folds_due()

    def _show_earlier_in_place(self) -> None:
        """Mount stored chapters above the first one, keeping what the view shows where it is."""
        self._showing = False
        first = next((c for c in self.query_children(Chapter) if not c.stored), None)
        if not self._stored or first is None:
            return
        was = first.virtual_region.y
        offset = was - self.scroll_y
        self.show_earlier()

        def keep_view(tries: int = 50) -> None:  # once a layout pass has placed the chapters mounted above
            target = first.virtual_region.y - offset
            if (first.virtual_region.y == was or target > self.max_scroll_y) and tries and first.is_mounted:
                self.app.set_timer(0.01, lambda: keep_view(tries - 1))
            else:
                self.scroll_to(y=target, animate=False, immediate=True)

        keep_view()

    def show_earlier(self) -> None:
        """Mount the newest stored chapters again, above the others; they stay while the user reads up there
        (stored again by the first message added once the view follows the end)."""
        first = next(iter(self.query_children(Chapter)), None)
        shown = 0
        while self._stored and shown < SHOW_MORE:
            chapter = Chapter(*[build() for build in self._stored.pop()])
            if first is not None:
                self.mount(chapter, before=first)
            else:
                self.mount(chapter)
            first, shown = chapter, shown + 1
        self._allowance += shown
        self._show_count()
        self._folds_due()

    def messages(self) -> Iterator[Widget]:
        """Every message and reply segment, oldest first (the unfinished tail of a stream excluded)."""
        for chapter in self.query_children(Chapter):
            if not chapter.stored:
                yield from chapter.children

    # --- plain messages -------------------------------------------------------------------------------
    # Each text passes the terminal sanitiser: the model, a tool, a server or a file name may have written it.
    def add_user(self, text: str) -> UserMessage:
        widget = UserMessage(Content(safe(text)))
        self.append(widget)
        return widget

    def add_notice(self, text: str, level: str = "info") -> NoticeMessage:
        widget = NoticeMessage(Content(safe(text)), classes=f"-{level}")
        self.append(widget)
        return widget

    def add_error(self, title: str, message: str, hint: str | None = None) -> ErrorMessage:
        body = Content.assemble((safe(title), "bold"), "\n", safe(message))
        if hint:
            body = Content.assemble(body, "\n", (safe(hint), "italic"))
        widget = ErrorMessage(body)
        self.append(widget)
        return widget

    def add_info(self, text: str | Content, title: str = "") -> InfoMessage:
        body = Content(safe(text)) if isinstance(text, str) else text
        if title:
            body = Content.assemble((safe(title), "bold"), "\n\n", body)
        widget = InfoMessage(body)
        self.append(widget)
        return widget

    def add_assistant(self, markdown: str) -> AssistantMessage | None:
        """A finished assistant message (a resumed conversation); while :meth:`resuming`, only its blueprint
        (``None``): most are never mounted."""
        from swebash_ai.frontends.tui.widgets.reply import AssistantMessage

        if self._pending is not None:
            self._pending.append(lambda: AssistantMessage(markdown))
            return None
        widget = AssistantMessage(markdown)
        self.append(widget)
        return widget

    # --- streaming ------------------------------------------------------------------------------------
    @property
    def streaming(self) -> bool:
        return self._stream is not None

    async def write_reply(self, fragment: str) -> None:
        """Append a fragment to the reply being streamed (starting one when needed). Returns at once:
        the text reaches the screen at the next flush."""
        if self._stream is None:
            self._stream = ReplyStream(self)
        self._stream.write(fragment)

    async def end_reply(self) -> None:
        """Flush and close the reply being streamed (text after a tool call starts a new one); say so when
        terminal control sequences were removed from it."""
        stream, self._stream = self._stream, None
        if stream is not None:
            await stream.close()
            self._last_reply = stream.segments
            if stream.segments:
                self._unshared.append(stream.segments)
            if removed := stream.sanitiser.removed:
                self.add_notice(removed_note(removed, "this answer (codes that could retitle the window, write "
                                             "the clipboard or redraw the screen)."), "warning")

    def share_replies(self, texts: Sequence[str]) -> int:
        """Let the replies streamed since the last call hold the conversation's text of them (``texts``, the
        turn's answers as the conversation keeps them) rather than a copy each (see
        ``AssistantMessage.share_source``); a reply whose text is not among them (control sequences removed
        from it, cut short) keeps its own. Returns how many replies were shared."""
        replies, self._unshared = self._unshared, []
        shared = 0
        for segments in replies:
            whole = "".join(segment.source for segment in segments)
            text = next((t for t in texts if t == whole), None)
            if text is None:
                continue
            start = 0
            for segment in segments:
                length = len(segment.source)
                segment.share_source(text, start)
                start += length
            shared += 1
        return shared

    def last_reply_text(self) -> str:
        """The Markdown of the reply being streamed, or of the last one (everything received so far)."""
        if self._stream is not None:
            return self._stream.text
        return "".join(seg.source for seg in self._last_reply)

    async def clear(self) -> None:
        await self.end_reply()
        await self.remove_children()
        self._shelf = None
        self._stored, self._earlier, self._allowance = [], None, MOUNTED_CHAPTERS
        self._unshared = []
        self._showing = False
        self.anchor(False)
