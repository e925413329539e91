"""AGENTS.md project instructions: which files, in which order, capped, and unreadable ones reported."""

from __future__ import annotations

from pathlib import Path

from swebash_ai.agent.instructions import load_instructions
from swebash_ai.agent.prompt import build_system_prompt


def _tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    repo = tmp_path / "repo"
    sub = repo / "pkg" / "sub"
    sub.mkdir(parents=True)
    (repo / ".git").mkdir()
    config = tmp_path / "config"
    config.mkdir()
    return repo, sub, config


def test_personal_then_root_then_nearest(tmp_path: Path) -> None:
    repo, sub, config = _tree(tmp_path)
    (tmp_path / "AGENTS.md").write_text("ABOVE THE REPO")  # outside the repository: never read
    (config / "AGENTS.md").write_text("personal: answer in French")
    (repo / "AGENTS.md").write_text("root: run make test")
    (sub / "AGENTS.md").write_text("sub: never touch vendor/")
    found = load_instructions(sub, config, 10_000)
    assert [f.path for f in found.files] == [config / "AGENTS.md", repo / "AGENTS.md", sub / "AGENTS.md"]
    text = found.render()
    assert "ABOVE THE REPO" not in text
    assert text.index("answer in French") < text.index("make test") < text.index("vendor/")
    assert "## Personal instructions" in text and "## Project instructions" in text
    assert not found.warnings and not found.problems
    prompt = build_system_prompt(sub, ["read_file"], instructions=text)
    assert prompt.endswith(text) and "# Project instructions" in prompt


def test_without_a_repository_only_the_working_directory(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("parent")
    cwd = tmp_path / "here"
    cwd.mkdir()
    (cwd / "AGENTS.md").write_text("here")
    found = load_instructions(cwd, tmp_path / "none", 10_000)
    assert [f.text for f in found.files] == ["here"]


def test_cap_cuts_the_farthest_file_first_with_a_warning(tmp_path: Path) -> None:
    repo, sub, config = _tree(tmp_path)
    (repo / "AGENTS.md").write_text("R" * 3000)
    (sub / "AGENTS.md").write_text("S" * 800)
    found = load_instructions(sub, config, 1000)
    near = found.files[-1]
    assert near.text == "S" * 800 and not near.cut
    far = found.files[0]
    assert far.cut and far.text.startswith("R" * 200) and far.text.count("R") == 200
    assert len(found.warnings) == 1 and str(repo / "AGENTS.md") in found.warnings[0]
    assert "3000" in found.warnings[0]


def test_unreadable_file_is_reported_not_fatal(tmp_path: Path) -> None:
    repo, sub, config = _tree(tmp_path)
    (repo / "AGENTS.md").write_bytes(b"\xff\xfe\x00bad")
    (sub / "AGENTS.md").mkdir()
    (config / "AGENTS.md").write_text("personal")
    found = load_instructions(sub, config, 10_000)
    assert [f.text for f in found.files] == ["personal"]
    assert len(found.problems) == 2
    assert any("not UTF-8" in p and str(repo / "AGENTS.md") in p for p in found.problems)


def test_files_go_through_the_guard_refusals_are_reported(tmp_path: Path) -> None:
    repo, sub, config = _tree(tmp_path)
    outside = tmp_path / "outside.md"
    outside.write_text("from outside the repository")
    (config / "AGENTS.md").symlink_to(outside)  # the user's own file may lead anywhere the policy allows
    (tmp_path / "bashrc").write_text("export TOKEN=x")
    (repo / "AGENTS.md").symlink_to(tmp_path / "bashrc")  # the repository's may not leave the repository
    (repo / "pkg" / "AGENTS.md").symlink_to("AGENTS.md")  # a loop: refused, never a crash
    (repo / "docs").mkdir()
    (repo / "docs" / "agents.md").write_text("see docs")
    (sub / "AGENTS.md").symlink_to("../../docs/agents.md")  # stays inside: read
    found = load_instructions(sub, config, 10_000)
    assert [(f.path, f.text) for f in found.files] == [
        (config / "AGENTS.md", "from outside the repository"), (sub / "AGENTS.md", "see docs")]
    assert [r.path for r in found.refused] == [repo / "AGENTS.md", repo / "pkg" / "AGENTS.md"]
    assert f"outside {repo}" in found.refused[0].reason and "ELOOP" in found.refused[1].reason
    assert found.notices[0] == found.refused[0].message and found.notices[0].startswith("Refused instructions ")
    assert not found.problems
