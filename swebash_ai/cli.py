"""Command line: the composition root. Parses arguments, loads settings, picks the TUI or one-shot.

Heavy front ends are imported only when chosen, so ``--help`` and ``--version`` stay instant.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from swebash_ai import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="swebash-ai",
        description="A terminal AI assistant that reads, searches and runs things for you, and asks before "
        "anything dangerous. With no arguments it opens the interactive app.",
    )
    parser.add_argument("--version", action="version", version=f"swebash-ai {__version__}")
    parser.add_argument("-c", dest="question", metavar="QUESTION", help="answer one question on stdout and exit")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.question is None:
        print("swebash-ai: the interactive app is not built yet; use -c", file=sys.stderr)
        return 2
    return 0
