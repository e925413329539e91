"""Where a Markdown link goes: one row per label that tells the truth or lies."""

from __future__ import annotations

import pytest

from swebash_ai.safety.link_text import NOTE_MAX, link_note, linkable

# (label, target, what is shown after the label)
CASES = [
    # The label is the target (an autolink): nothing to add.
    ("https://github.com/x", "https://github.com/x", None),
    # The label names the target's host, with or without scheme or path: the user reads where it goes.
    ("github.com", "https://github.com/a/b", None),
    ("https://github.com/x", "https://github.com/y", None),
    ("HTTPS://GitHub.com/", "https://github.com", None),
    # A URL label that lies about the host: the real host is shown.
    ("https://github.com/x", "https://evil.example/steal", "evil.example"),
    ("github.com", "https://github.com.evil.example/", "github.com.evil.example"),
    # User info is not the host, and a backslash is a slash to a browser.
    ("github.com", "https://github.com@evil.example/", "evil.example"),
    ("github.com", "https://evil.example\\@github.com/", "evil.example"),
    # A port is part of where it goes.
    ("github.com", "https://github.com:8443/", "github.com:8443"),
    # Prose labels: the host is always shown.
    ("the docs", "https://docs.python.org/3/", "docs.python.org"),
    ("README.md", "https://github.com/x/README.md", "github.com"),
    # A look-alike host (Cyrillic і) shows in its ASCII form, even when label and target agree.
    ("gіthub.com", "https://gіthub.com/", "xn--gthub-n2e.com"),
    ("https://gіthub.com/", "https://gіthub.com/", "xn--gthub-n2e.com"),
    # Mail: the address is the label, or it is shown.
    ("x@y.example", "mailto:x@y.example", None),
    ("write to us", "mailto:x@y.example", "mailto:x@y.example"),
    # Not a web address: the whole target is shown (cut when long).
    ("click", "javascript:alert(1)", "javascript:alert(1)"),
    ("the file", "src/main.py", "src/main.py"),
    ("x", "javascript:" + "a" * 200, "javascript:" + "a" * (NOTE_MAX - 12) + "…"),
    # A target holding escapes or invisible characters shows them.
    ("x", "file:///tmp/\u202etxt.sh", "file:///tmp/<U+202E>txt.sh"),
]


@pytest.mark.parametrize(("label", "target", "note"), CASES)
def test_link_note(label: str, target: str, note: str | None) -> None:
    assert link_note(label, target) == note


@pytest.mark.parametrize(("target", "ok"), [
    ("https://github.com/x", True),  # web
    ("http://localhost:8000/", True),
    ("mailto:x@y.example", True),  # mail
    ("javascript:alert(1)", False),  # runs code in a browser
    ("file:///etc/passwd", False),  # opens a local file
    ("src/main.py", False),  # relative: nothing to open
    ("https://", False),  # no host
    ("https://[::1/", False),  # a broken IPv6 literal
])
def test_linkable(target: str, ok: bool) -> None:
    assert linkable(target) is ok
