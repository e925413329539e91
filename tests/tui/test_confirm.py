"""The confirmation modal's rendering of what is asked."""

from __future__ import annotations

from swebash_ai.tui.screens.confirm import looks_like_diff, render_detail

DIFF = "--- a/config.py\n+++ b/config.py\n@@ -1,2 +1,2 @@\n import os\n-DEBUG = True\n+DEBUG = False\n"


def test_a_command_is_shown_verbatim():
    text = "rm -rf build [not markup] $(whoami)"
    assert not looks_like_diff(text)
    assert render_detail(text).plain == text


def test_a_diff_is_coloured_by_theme_variables():
    assert looks_like_diff(DIFF)
    content = render_detail(DIFF)
    assert content.plain == DIFF.rstrip("\n")
    styles = {str(span.style) for span in content.spans}
    assert {"$text-success", "$text-error", "$text-accent"} <= styles


def test_argument_display_leaves_out_unset_optionals() -> None:
    from swebash_ai.tui.widgets.activity import format_arguments

    assert format_arguments({"command": "ls", "timeout": None, "cwd": None}) == '{\n  "command": "ls"\n}'
    assert format_arguments("{bad json") == "{bad json"
