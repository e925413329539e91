"""``swebash-ai stats`` after real one-shot turns: the figures match what happened."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from swebash_ai.testing.fake_server import FakeLLMServer, Reply


def test_one_shot_turns_are_counted_by_the_stats_command(llm_env: FakeLLMServer, run_cli: Any,
                                                         workspace: Path) -> None:
    (workspace / "notes.txt").write_text("hello\n")
    llm_env.enqueue(
        Reply.tool_calls([("read_file", {"path": "notes.txt"}), ("list_dir", {"path": "."})], usage=(120, 8)),
        Reply.text("It says hello.", usage=(300, 5), cached_tokens=256),
        Reply.text("Nothing else.", usage=(50, 3)),
    )
    assert run_cli("-c", "what is in notes.txt?").returncode == 0
    assert run_cli("--resume", "-c", "anything else?").returncode == 0
    res = run_cli("stats", "--json")
    assert res.returncode == 0, res.stderr
    stats = json.loads(res.stdout)
    assert stats["tools"]["read_file"]["ok"] == 1 and stats["tools"]["list_dir"]["ok"] == 1
    assert stats["decisions"]["auto_allowed"] == 2
    assert stats["turns"]["count"] == 2 and stats["turns"]["rounds"] == {"0": 1, "1": 1}
    assert stats["requests"]["count"] == 3 and stats["requests"]["failed"] == 0
    # the second request of the tool turn was served 256 tokens from the provider's cache
    assert stats["tokens"]["with_tools"] == {"turns": 1, "prompt": 420, "cached": 256, "completion": 13}
    assert stats["tokens"]["without_tools"] == {"turns": 1, "prompt": 50, "cached": 0, "completion": 3}
    text = run_cli("stats", "--since", "1h")
    assert text.returncode == 0 and "read_file" in text.stdout and "tool rounds per turn" in text.stdout
    assert "cached prompt tokens: 256 (54% of the tokens in" in text.stdout  # 256 of 470
    bad = run_cli("stats", "--since", "soon")
    assert bad.returncode == 2 and "30m, 24h, 7d" in bad.stderr
    # one session by a prefix of its id; an id that names none is an error, not a page of zeros
    first = min((Path(run_cli("config", "--path").stdout.strip()).parent / "sessions").glob("*.jsonl")).stem
    one = json.loads(run_cli("stats", "--session", first[:17], "--json").stdout)
    assert one["window"]["session"] == first and one["turns"]["count"] == 2
    typo = run_cli("stats", "--session", "nosuch")
    assert typo.returncode == 2 and typo.stdout == ""
    assert typo.stderr.startswith("swebash-ai: stats: no single session matches 'nosuch'")
