"""Turning a fetched body into text for the model: HTML reduced to readable text, charsets, content kinds.

HTML loses scripts, styles and navigation; headings become ``#`` lines and links ``text (url)``.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from html.parser import HTMLParser

_SPACE = re.compile(r"\s+")
# fmt: off
_TEXT_TYPES = frozenset({
    "application/json", "application/xml", "application/javascript", "application/x-yaml", "application/yaml",
    "application/toml", "application/x-ndjson",
})
# fmt: on
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})

MAX_LINKS = 2000
"""Links of one page that are kept."""


class _TextExtractor(HTMLParser):
    """HTML to readable text: drops scripts, styles and navigation; headings become ``#`` lines."""

    _SKIP = frozenset({"script", "style", "noscript", "nav", "template", "svg", "head", "iframe", "button"})
    # fmt: off
    _BLOCK = frozenset({
        "p", "div", "section", "article", "main", "header", "footer", "aside", "ul", "ol", "table", "tr",
        "blockquote", "pre", "form", "dl", "dt", "dd", "figure", "hr",
    })
    # fmt: on

    def __init__(self, base_url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.title = ""
        self._out: list[str] = []
        self._skip = 0
        self._pre = 0
        self._in_title = False
        self._link: tuple[str, int] | None = None
        self.links: list[str] = []
        """Every http(s) link of the page (navigation too), absolute, at most :data:`MAX_LINKS`."""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a" and len(self.links) < MAX_LINKS:
            href = (dict(attrs).get("href") or "").strip()
            url = join_url(self.base_url, href) if href else ""
            if url.startswith(("http://", "https://")):
                self.links.append(url)
        if tag == "title":
            self._in_title = True
        if tag in self._SKIP:
            self._skip += 1
        if self._skip:
            return
        if len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
            self._out.append("\n\n" + "#" * int(tag[1]) + " ")
        elif tag == "li":
            self._out.append("\n- ")
        elif tag == "br":
            self._out.append("\n")
        elif tag in self._BLOCK:
            self._out.append("\n\n")
        elif tag in ("td", "th"):
            self._out.append(" | ")
        elif tag == "a":
            href = dict(attrs).get("href") or ""
            keep = href and not href.startswith(("#", "javascript:"))
            self._link = (href, len(self._out)) if keep else None
        if tag == "pre":
            self._pre += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag in self._SKIP:
            self._skip = max(0, self._skip - 1)
            return
        if self._skip:
            return
        if tag == "pre":
            self._pre = max(0, self._pre - 1)
        if (len(tag) == 2 and tag[0] == "h" and tag[1] in "123456") or tag in self._BLOCK:
            self._out.append("\n\n")
        elif tag == "a" and self._link is not None:
            href, start = self._link
            self._link = None
            label = "".join(self._out[start:]).strip()
            url = join_url(self.base_url, href)
            if label and url and url.startswith(("http://", "https://")) and url not in (label, label + "/"):
                self._out.append(f" ({url})")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        if self._skip:
            return
        self._out.append(data if self._pre else _SPACE.sub(" ", data))

    def text(self) -> str:
        lines = []
        for line in "".join(self._out).split("\n"):
            line = line.rstrip()
            if not line.startswith("  "):  # not preformatted: drop the space runs joined pieces leave
                line = _SPACE.sub(" ", line).strip()
            lines.append(line)
        body = "\n".join(line for line in lines if not re.fullmatch(r"#+", line))  # empty headings
        return re.sub(r"\n{3,}", "\n\n", body).strip()


def join_url(base: str, href: str) -> str:
    import httpx

    try:
        return str(httpx.URL(base).join(href.strip()))
    except (httpx.InvalidURL, ValueError):
        return ""


@dataclass(frozen=True)
class PageText:
    """An HTML document as the model reads it."""

    text: str
    title: str
    links: list[str]


def html_to_text(markup: str, base_url: str = "") -> PageText:
    """Readable text of an HTML document, its title and its links."""
    parser = _TextExtractor(base_url)
    parser.feed(markup)
    parser.close()
    title = _SPACE.sub(" ", parser.title).strip()
    return PageText(parser.text(), title, parser.links)


_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.IGNORECASE)


def decode(body: bytes, charset: str | None, is_html: bool) -> str:
    if not charset and is_html:
        found = _META_CHARSET.search(body[:4096])
        charset = found.group(1).decode("ascii") if found else None
    try:
        codec = codecs.lookup(charset or "utf-8").name
    except LookupError:
        codec = "utf-8"
    return body.decode(codec, errors="replace")


def kind(content_type: str, body_start: bytes) -> str | None:
    """``"html"``, ``"text"`` or ``None`` (binary) for a media type; sniffs when the server sent none."""
    if content_type in _HTML_TYPES:
        return "html"
    if content_type.startswith("text/") or content_type in _TEXT_TYPES or content_type.endswith(("+json", "+xml")):
        return "text"
    if content_type or b"\x00" in body_start:
        return None
    head = body_start[:512].lstrip().lower()
    return "html" if head.startswith((b"<!doctype html", b"<html")) else "text"


