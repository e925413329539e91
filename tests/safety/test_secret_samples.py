"""The content scan measured on the secret scanners' published samples (tests/safety/data/secret_samples.jsonl).

Each line of the data file is one sample: ``secret`` (true: a credential the model must not see), ``text`` (as the
scanner published it, as a workspace file read through ``read_file`` would show it), ``source`` (scanner, rule id,
file and commit); for secrets the service ``group`` and the ``values`` the scanner's own rule captures in the text
(``null`` where its rule could not be run here); for negatives their ``kind``: ``code`` and ``id`` (code and
identifiers the model needs to see and edit: these are measured), ``placeholder`` and ``secret-like`` (the
scanners' negatives that are placeholders, or credentials of another format: kept for the record, not measured).
``docs/safety.md`` says how the set was chosen and gives the figures.

A secret counts as kept from the model when the scan masks something and none of its values is left, nor any run
of 10 or more letters and digits (with both) of a value: a mask that leaves half of a token counts as a miss. A
sample without values is judged on all such runs of its text.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from swebash_ai.safety.redact import redact_output
from swebash_ai.safety.secrets import RULES, mask_secrets

DATA = Path(__file__).parent / "data" / "secret_samples.jsonl"
SAMPLES = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
SECRETS = [s for s in SAMPLES if s["secret"]]
NEGATIVES = [s for s in SAMPLES if not s["secret"] and s["kind"] in ("code", "id")]
_RUN = re.compile(r"[A-Za-z0-9]{10,}")

MIN_RECALL = 0.97
MAX_FALSE_MASKS = 0.01


def _runs(text: str) -> list[str]:
    return [r for r in _RUN.findall(text) if any(c.isdigit() for c in r) and any(c.isalpha() for c in r)]


def kept(sample: dict[str, object]) -> bool:
    """The scan keeps the sample's secret from the model (see the module docstring)."""
    text = str(sample["text"])
    scan = mask_secrets(text)
    if not scan.masked:
        return False
    values = sample.get("values") or [text]
    assert isinstance(values, list)
    return not any(v in scan.text or any(r in scan.text for r in _runs(v)) for v in values)


def test_the_sample_set_is_large_and_sourced() -> None:
    assert len(SECRETS) >= 300 and len({s["group"] for s in SECRETS}) >= 80
    scanners = Counter(s["source"].split()[0] for s in SECRETS)
    assert set(scanners) == {"gitleaks", "trufflehog", "noseyparker", "kingfisher", "detect-secrets"}
    assert all(s["source"] and s["text"] for s in SAMPLES)
    kinds = Counter(s["kind"] for s in SAMPLES if not s["secret"])
    assert set(kinds) == {"code", "id", "placeholder", "secret-like"} and kinds["code"] + kinds["id"] >= 300


def test_recall_on_the_scanners_samples() -> None:
    missed = [s for s in SECRETS if not kept(s)]
    recall = 1 - len(missed) / len(SECRETS)
    shown = "\n".join(f"{s['source']}: {s['text'][:80]!r}" for s in missed[:30])
    assert recall >= MIN_RECALL, f"recall {recall:.1%}, missed {len(missed)}:\n{shown}"


@pytest.mark.parametrize("scan", [mask_secrets, redact_output], ids=["tool result", "unapproved output"])
def test_code_and_identifiers_are_not_masked(scan: object) -> None:
    masked = [s for s in NEGATIVES if scan(s["text"]).masked]  # type: ignore[operator]
    rate = len(masked) / len(NEGATIVES)
    shown = "\n".join(repr(s["text"][:80]) for s in masked)
    assert rate <= MAX_FALSE_MASKS, f"false masks {rate:.1%}:\n{shown}"


def test_every_kind_masks_something_in_the_samples_or_its_cases() -> None:
    from tests.safety.test_secrets import CASES

    found: set[str] = {k for _t, _s, k in CASES}
    for s in SECRETS:
        found.update(mask_secrets(s["text"]).kinds)
    assert {r.kind for r in RULES} <= found


def test_the_issues_formats_are_kept_whole() -> None:
    """The services issue 44 found reaching the model whole: each has samples, and every one is kept."""
    named = ("age", "vault", "doppler", "discord", "notion", "heroku", "cloudflare", "sentry", "supabase", "square",
             "atlassian", "npm")  # fmt: skip
    for group in named:
        samples = [s for s in SECRETS if s["group"] == group]
        assert samples, group
        missed = [s["text"][:80] for s in samples if not kept(s)]
        assert not missed, (group, missed)


def test_this_projects_docs_are_read_unmasked() -> None:
    """The user docs name formats, placeholders and commands (``curl -u user:password``): none is a secret."""
    root = Path(__file__).resolve().parents[2]
    docs = [*sorted((root / "docs").glob("*.md")), root / "README.md"]
    masked = {p.name: mask_secrets(p.read_text(encoding="utf-8")).kinds for p in docs}
    assert len(docs) > 3 and not any(masked.values()), masked
