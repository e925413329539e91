"""The share of everyday read-only developer commands the command policy asks about (aim: at most 5%).

The list is ``tests/safety/data/everyday_dev_commands.txt`` (looking around, reading, searching, git history,
pipelines, loops over files, here-documents, archives); it runs against a throwaway project built by
``tests/safety/everyday.py``.  The package measured is whichever ``swebash_ai`` Python imports, so the same
list can measure another checkout:

    PYTHONPATH=$PWD python3 bench/ask_rate.py            # this checkout
    PYTHONPATH=/path/to/other python3 bench/ask_rate.py  # another one (the list and workspace from here)
    python3 bench/ask_rate.py --show                     # and every command that is not allowed, with why
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", action="store_true", help="print every command that asks, with the reasons")
    args = parser.parse_args()
    spec = importlib.util.spec_from_file_location("everyday", ROOT / "tests" / "safety" / "everyday.py")
    assert spec and spec.loader
    everyday = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(everyday)

    import swebash_ai
    from swebash_ai.safety.commands import CommandPolicy
    from swebash_ai.safety.paths import PathPolicy

    commands = everyday.load_commands()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(os.path.realpath(tmp))
        ws = everyday.build_workspace(base)
        policy = CommandPolicy(PathPolicy(roots=[ws], home=base / "home"))
        asked = everyday.ask_rate(policy, ws, commands)
    print(f"package: {Path(swebash_ai.__file__).parent}")
    print(f"everyday developer commands: {len(commands)}; not allowed: {len(asked)} ({len(asked) / len(commands):.1%})")
    if args.show:
        for command, why in asked.items():
            print(f"  {command!r}: {why[0]}: {'; '.join(why[1:3])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
