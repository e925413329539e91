"""``python -m swebash_ai``.

``-m`` puts the working directory first on Python's path, so a project's ``httpx.py`` or ``litellm/`` would be
imported in place of the real one: a workspace must never run code in swebash-ai's own process. The entry
removes it before anything else is imported (unless swebash-ai itself is being run from that folder, as in a
checkout). The ``swebash-ai`` script never has it on the path.
"""

from __future__ import annotations

import os
import sys

try:
    _cwd: str | None = os.path.realpath(os.getcwd())
except OSError:  # the folder was deleted or cannot be reached: cli.main says so in a sentence
    _cwd = None
if sys.path and sys.path[0] and os.path.realpath(sys.path[0]) == _cwd:
    here = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    if os.path.realpath(sys.path[0]) != here:
        del sys.path[0]

from swebash_ai.frontends.leave import run

run()
