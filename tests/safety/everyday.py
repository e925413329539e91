"""The everyday developer command list and the workspace it runs in, for the ask-rate test and bench.

``data/everyday_dev_commands.txt`` holds one command per line; a line that opens a here-document continues
up to its delimiter line.  :func:`build_workspace` makes the project those commands look at (a git repository
with source, tests, docs, logs, JSON/CSV data and a release archive), and :func:`ask_rate` judges every
command with the policy and returns the ones that were not allowed.  Kept free of pytest so that
``bench/ask_rate.py`` can load it by path and measure any checkout of the package.
"""

from __future__ import annotations

import io
import re
import subprocess
import tarfile
from pathlib import Path
from typing import Any

DATA = Path(__file__).with_name("data") / "everyday_dev_commands.txt"
_HEREDOC = re.compile(r"<<-?\s*['\"]?([A-Za-z_][A-Za-z0-9_]*)['\"]?")


def load_commands(path: Path = DATA) -> list[str]:
    """The commands of the list, here-documents kept whole."""
    out: list[str] = []
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip() or line.startswith("# "):
            continue
        m = _HEREDOC.search(line)
        if m and "<<<" not in line:
            body = [line]
            while i < len(lines):
                body.append(lines[i])
                i += 1
                if lines[i - 1] == m.group(1):
                    break
            line = "\n".join(body)
        out.append(line)
    return out


FILES = {
    "README.md": "# app\n\nA small service.\n",
    "CHANGELOG.md": "".join(f"- change {n}\n" for n in range(30)),
    "src/app.py": "import sys\n\n\ndef main() -> int:\n    # TODO: flags\n    print('hi')\n    return 0\n",
    "src/utils.py": "import os\n\n\nclass Helper:\n    def run(self):\n        return os.getcwd()\n",
    "tests/test_app.py": "from src.app import main\n\n\ndef test_main():\n    assert main() == 0\n",
    "docs/guide.md": "# Guide\n\nRead the README first.\n",
    "docs/api.md": "# API\n",
    "logs/app.log": "INFO start\nERROR boom\nWARN slow\nINFO stop\n",
    "data.json": '{"items": [{"id": 1}, {"id": 2}], "name": "app"}\n',
    "data.csv": "name,kind,count\na,x,1\nb,y,2\n",
    "package.json": '{"name": "app", "version": "1.0.0", "scripts": {"test": "jest"}, "dependencies": {"x": "1"}}\n',
    "pyproject.toml": '[project]\nname = "app"\nversion = "1.0.0"\n',
    "requirements.txt": "# pinned\nrequests==2.0\nflask==3.0\n",
    "Makefile": "test:\n\tpytest\nlint:\n\truff check .\n",
    ".gitignore": "__pycache__/\ndist/\n",
    "notes.txt": "b\na\nb\n",
    "other.txt": "a\nc\n",
}


def build_workspace(base: Path) -> Path:
    """The project the everyday commands look at, as a git repository with two commits and a tag."""
    ws = base / "home" / "proj"
    for name, text in FILES.items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text(text)
    (ws / "dist").mkdir()
    with tarfile.open(ws / "dist" / "app.tar.gz", "w:gz") as tar:
        data = b"print('hi')\n"
        info = tarfile.TarInfo("app/main.py")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    git = ["git", "-c", "user.name=dev", "-c", "user.email=dev@example.invalid", "-C", str(ws)]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    (ws / "src" / "utils.py").write_text(FILES["src/utils.py"] + "# fix\n")
    subprocess.run([*git, "commit", "-qam", "fix utils"], check=True)
    subprocess.run([*git, "tag", "v1"], check=True)
    return ws


def ask_rate(policy: Any, ws: Path, commands: list[str]) -> dict[str, list[str]]:
    """The commands the policy does not allow, with its reasons."""
    out: dict[str, list[str]] = {}
    for c in commands:
        v = policy.assess(c, str(ws))
        if v.decision != "allow":
            out[c] = [v.decision, *v.reasons]
    return out
