"""False masks of the content detector (``swebash_ai/safety/secrets.py``) on ordinary code, and its speed.

Runs :func:`mask_secrets` over every text file of this repository and of a few source trees installed in
site-packages (textual, httpx, pydantic, rich, and litellm, botocore where installed), as every tool result
is scanned before the model sees it. These trees are public code: every mask in them counts as a false
mask (an upper bound: a test fixture's fake token is "correctly" masked, but it is counted here too).

Prints per tree: files scanned, MB, files with at least one mask (the false-mask rate is that over files
scanned), masks by kind, key files that ``read_file`` would refuse, and the scan speed in MB/s. Then line
ranges: ``read_file`` of two lines every ``--every`` lines of each file, scanned alone (as the loop scans a
result) and with the lines the whole file shows as key material removed first (as ``read_file`` does for a
range): ranges masked each way; a range masked only the second way is a new mask.

    python bench/false_masks.py [--show 20] [--every 25] [--tree PATH ...]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import time
from collections import Counter
from pathlib import Path

from swebash_ai.safety.secrets import is_key_file, mask_secrets, private_key_lines

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("textual", "httpx", "pydantic", "rich", "litellm", "botocore")
SKIP_DIRS = {".git", "__pycache__", "node_modules", ".mypy_cache", ".ruff_cache", ".pytest_cache"}
MAX_SIZE = 1 << 20  # read_file's default fs_max_size


def trees(extra: list[str]) -> list[tuple[str, Path]]:
    found = [("swebash-ai (this repository)", REPO)]
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            found.append((name, Path(next(iter(spec.submodule_search_locations)))))
    found += [(p, Path(p)) for p in extra]
    return found


def text_files(root: Path) -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
        for name in filenames:
            path = Path(dirpath) / name
            if path.is_file() and not path.is_symlink() and path.stat().st_size <= MAX_SIZE:
                out.append(path)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", type=int, default=10, help="print up to N masked lines for review")
    parser.add_argument("--tree", action="append", default=[], help="another source tree to scan")
    parser.add_argument("--every", type=int, default=25, help="a two-line range every N lines of each file")
    opts = parser.parse_args()
    total_files = total_masked_files = total_bytes = 0
    total_time = 0.0
    all_kinds: Counter[str] = Counter()
    shown: list[str] = []
    ranges = [0, 0, 0]  # ranges read, masked scanned alone, masked with the file's key lines removed first
    print(f"{'tree':<30} {'files':>7} {'MB':>7} {'masked files':>13} {'rate':>7} {'masks':>6} {'key files':>9} "
          f"{'MB/s':>7}")
    for label, root in trees(opts.tree):
        files = masked_files = masks = key_files = size = 0
        spent = 0.0
        kinds: Counter[str] = Counter()
        for path in text_files(root):
            data = path.read_bytes()
            if b"\x00" in data[:8192]:
                continue  # binary: read_file refuses it
            text = data.decode("utf-8", "replace")
            files += 1
            size += len(data)
            start = time.perf_counter()
            scan = mask_secrets(text)
            key_files += is_key_file(text)
            spent += time.perf_counter() - start
            _ranges(text, opts.every, ranges)
            if scan.masked:
                masked_files += 1
                masks += scan.masked
                kinds.update(scan.kinds)
                if scan.private_keys:
                    kinds["private-key"] += scan.private_keys
                for before, after in zip(text.splitlines(), scan.text.splitlines(), strict=False):
                    if before != after and len(shown) < opts.show:
                        shown.append(f"{path.relative_to(root)}: {before.strip()[:100]}")
        rate = masked_files / files if files else 0.0
        print(f"{label:<30} {files:>7} {size / 1e6:>7.1f} {masked_files:>13} {rate:>7.2%} {masks:>6} {key_files:>9} "
              f"{size / 1e6 / spent if spent else 0:>7.0f}")
        total_files += files
        total_masked_files += masked_files
        total_bytes += size
        total_time += spent
        all_kinds.update(kinds)
    rate = total_masked_files / total_files if total_files else 0.0
    print(f"{'all':<30} {total_files:>7} {total_bytes / 1e6:>7.1f} {total_masked_files:>13} {rate:>7.2%} "
          f"{sum(all_kinds.values()):>6} {'':>9} {total_bytes / 1e6 / total_time if total_time else 0:>7.0f}")
    print("masks by kind:", ", ".join(f"{k} {n}" for k, n in all_kinds.most_common()) or "none")
    print(f"line ranges (2 lines every {opts.every}): {ranges[0]} read, {ranges[1]} masked scanned alone, "
          f"{ranges[2]} masked judged on the file")
    if shown:
        print("\nmasked lines (before masking), for review:")
        print("\n".join(f"  {line}" for line in shown))


def _ranges(text: str, every: int, counts: list[int]) -> None:
    lines = text.split("\n")
    keys = private_key_lines(text)  # what read_file's shown_without_keys judges each range on, once per file
    for first in range(0, max(len(lines) - 1, 0), every):
        last = min(first + 1, len(lines) - 1)
        alone = mask_secrets("\n".join(lines[first : last + 1]))
        judged = mask_secrets("\n".join(keys.shown.get(i, lines[i]) for i in range(first, last + 1)))
        counts[0] += 1
        counts[1] += bool(alone.masked)
        counts[2] += bool(judged.masked or keys.blocks_in(first, last))


if __name__ == "__main__":
    main()
