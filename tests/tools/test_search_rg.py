"""The search tool's ripgrep lane: it reads only the candidates ripgrep proposes, ripgrep never opens what the
path policy protects, and its counts are the walk's. (tests/tools/test_search.py runs every case in both lanes.)"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from search_helpers import write
from test_search import hits, run

from swebash_ai.safety.paths import PathPolicy
from swebash_ai.tools import search as search_mod
from swebash_ai.tools import search_rg
from swebash_ai.tools.registry import ToolContext

pytestmark = pytest.mark.skipif(search_rg.ripgrep() is None, reason="ripgrep is not installed")


async def test_the_ripgrep_lane_reads_only_its_candidates(ctx: ToolContext, tree: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[str] = []
    real = search_mod._Search._file

    def spy(self: Any, dir_fd: int, name: str, rel: str, abs_path: str) -> None:
        opened.append(rel)
        real(self, dir_fd, name, rel, abs_path)

    def no_walk(*_a: Any) -> None:
        raise AssertionError("the walk ran although ripgrep could answer")

    monkeypatch.setattr(search_mod._Search, "_file", spy)
    monkeypatch.setattr(search_mod._Search, "_walk", no_walk)
    r = await run(ctx, pattern="hello")
    assert sorted(opened) == ["docs/readme.md", "src/app.py", "src/util.py"]  # not notes.txt, data.bin, .env
    assert r.metadata["matches"] == 4


@pytest.mark.parametrize(
    ("name", "proposed"),
    [
        (".env", False), (".env.local", False), (".ENV.production", False), ("id_work", False),  # by name
        ("secrets.yaml", False), ("server.pem", False), ("gha-creds-1.json", False), (".bash_history", False),
        ("db.sqlite", False),  # the user's path_deny glob
        (".env.example", True), ("id_rsa.pub", True), ("id_utils.py", True), ("env.py", True),  # ordinary
        ("notes#1.txt", True), ("!important.txt", True),
    ],
)
def test_ripgrep_never_opens_what_the_policy_protects(workspace: Path, isolated_env: Path, name: str,
                                                      proposed: bool) -> None:
    write(workspace, {name: "needle\n", "sub/.ssh/id_x": "needle\n", "plain.txt": "needle\n"})
    policy = PathPolicy(roots=[workspace], home=isolated_env, extra_deny=["*.sqlite", str(workspace / "sub/.ssh")])
    found = search_rg.candidates(workspace, "needle", ignore_case=True, max_size=10_000, exclude=[],
                                 deny_bases=[b for b, _ in policy.deny_paths], deny_globs=policy.deny_globs)
    assert found is not None
    rels, _searched = found
    assert "plain.txt" in rels and "sub/.ssh/id_x" not in rels
    assert (name in rels) is proposed
    assert (policy.denied_reason(workspace / name) is None) is proposed  # the same verdict as the policy's


async def test_both_lanes_count_the_same_lines_past_what_is_shown(ctx: ToolContext, workspace: Path,
                                                                  isolated_env: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    (isolated_env / ".ssh").mkdir()
    (isolated_env / ".ssh/id_rsa").write_text("Needle in a key\n")
    files: dict[str, str | bytes] = {f"d{i % 4}/f{i}.txt": "needle\nNEEDLE twice needle\nnone\n" * (i % 3 + 1)
                                     for i in range(40)}
    files["big.txt"] = "needle\n" * 400_000  # over fs_max_size: neither lane counts it
    files["bin.dat"] = b"\x00needle"
    write(workspace, files)
    os.link(isolated_env / ".ssh/id_rsa", workspace / "d0/linked.txt")  # a hard link to a key: never counted
    for case_sensitive in (False, True):
        fast = await run(ctx, pattern="needle", max_results=5, case_sensitive=case_sensitive)
        monkeypatch.setattr(search_rg, "ripgrep", lambda: None)
        walked = await run(ctx, pattern="needle", max_results=5, case_sensitive=case_sensitive)
        monkeypatch.undo()
        assert (fast.metadata["matches"], fast.metadata["files"]) == (walked.metadata["matches"],
                                                                      walked.metadata["files"])
        assert fast.metadata["files"] == 40 and len(hits(fast)) == len(hits(walked)) == 5
        # (which five lines are shown may differ: the walk goes in disk order, ripgrep's lane in path order)
