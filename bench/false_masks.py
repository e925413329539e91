"""False masks of the content detector (``swebash_ai/safety/secrets.py``) on ordinary code, and its speed.

Runs :func:`mask_secrets` over every text file of this repository and of a few source trees installed in
site-packages (textual, httpx, pydantic, rich, and litellm, botocore where installed), as every tool result
is scanned before the model sees it. These trees are public code: every mask in them counts as a false
mask (an upper bound: a test fixture's fake token is "correctly" masked, but it is counted here too).

Prints per tree: files scanned, MB, files with at least one mask (the false-mask rate is that over files
scanned), masks by kind, key files that ``read_file`` would refuse, and the scan speed in MB/s.

    python bench/false_masks.py [--show 20] [--tree PATH ...]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import time
from collections import Counter
from pathlib import Path

from swebash_ai.safety.secrets import is_key_file, mask_secrets

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
    opts = parser.parse_args()
    total_files = total_masked_files = total_bytes = 0
    total_time = 0.0
    all_kinds: Counter[str] = Counter()
    shown: list[str] = []
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
    if shown:
        print("\nmasked lines (before masking), for review:")
        print("\n".join(f"  {line}" for line in shown))


if __name__ == "__main__":
    main()
