"""One-shot on a terminal draws Markdown links so their label cannot lie: the target's host is shown after
a label that does not name it, and every terminal hyperlink (OSC 8) goes to a host the line shows."""

from __future__ import annotations

import io
import re

import pytest
from markdown_it import MarkdownIt

from swebash_ai.frontends.markdown_links import expose_link_targets
from swebash_ai.frontends.oneshot_render import MarkdownRenderer
from swebash_ai.safety.link_text import _host

OSC8 = re.compile(r"\x1b\]8;[^;]*;([^\x1b]*)\x1b\\")
CSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def render(answer: str) -> tuple[str, list[str]]:
    """What a terminal shows of ``answer`` (text, escape codes removed), and the targets of its hyperlinks."""
    out, err = Tty(), io.StringIO()
    renderer = MarkdownRenderer(out, err)
    for cut in range(0, len(answer), 7):  # streamed in pieces, as the loop sends it
        renderer.text(answer[cut:cut + 7])
    renderer.end_text()
    written = out.getvalue()
    targets = [t for t in OSC8.findall(written) if t]
    shown = CSI.sub("", OSC8.sub("", written[written.rfind("\x1b[2K"):]))  # the final print, after the live view
    return " ".join(shown.split()), targets


@pytest.mark.parametrize(("answer", "shown"), [
    # A URL label that lies: the real host follows it.
    ("Read [https://github.com/x](https://evil.example/steal) now.", "https://github.com/x (evil.example) now."),
    # A host label that lies through user info.
    ("Open [github.com](https://github.com@evil.example/).", "github.com (evil.example)."),
    # A prose label: the host is said.
    ("See [the docs](https://docs.python.org/3/).", "the docs (docs.python.org)."),
    # Honest labels are left alone.
    ("See [github.com](https://github.com/x) or <https://github.com/y>.",
     "See github.com or https://github.com/y."),
])
def test_a_lying_link_shows_its_host(answer: str, shown: str) -> None:
    text, targets = render(answer)
    assert shown in text
    assert targets, "a terminal gets hyperlinks"
    for target in targets:  # what a click opens is a host the user can read on the line
        host = _host(target)
        assert host is not None and host in text, (target, text)


def test_a_link_to_something_not_on_the_web_is_text() -> None:
    text, targets = render("Open [main](src/main.py) and ![shot](https://img.example/a.png).")
    assert "main (src/main.py)" in text
    assert "🌆 shot (img.example)" in text
    assert set(targets) == {"https://img.example/a.png"}  # the relative path is no hyperlink


def test_tokens_are_rewritten_once_per_link() -> None:
    tokens = MarkdownIt().parse("[a](https://x.example) [b](rel) [c](https://c.example)")
    expose_link_targets(tokens)
    children = tokens[1].children or []
    assert [c.type for c in children].count("link_open") == 2  # the relative one is text
    assert "".join(c.content for c in children) == "a (x.example) b (rel) c (c.example)"
