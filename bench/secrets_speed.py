"""Speed of the content scan on ordinary source: ms to scan 1 MB of the standard library's Python source.

Every tool result passes :func:`swebash_ai.safety.secrets.mask_secrets` before the model sees it, so its cost on
text without secrets is the cost of every read. Prints the best of ``--runs`` scans (wall-clock and CPU time: on
a machine shared with other work the CPU time is the cost of the scan itself) of the first 1,000,000 characters
of the standard library's top-level modules (the same text on every machine with this Python), the first scan
(rules compile then), and the time to import the scanner.

    python bench/secrets_speed.py [--runs 7]
"""

from __future__ import annotations

import argparse
import sysconfig
import time
from pathlib import Path

SIZE = 1_000_000


def source_text() -> str:
    parts: list[str] = []
    total = 0
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        parts.append(text)
        total += len(text)
        if total >= SIZE:
            break
    return "".join(parts)[:SIZE]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    opts = parser.parse_args()
    text = source_text()
    start = time.perf_counter()
    from swebash_ai.safety.secrets import mask_secrets

    imported = time.perf_counter() - start
    start = time.perf_counter()
    first = mask_secrets(text)
    first_ms = (time.perf_counter() - start) * 1000
    best = cpu = float("inf")
    for _ in range(opts.runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        mask_secrets(text)
        best = min(best, time.perf_counter() - start)
        cpu = min(cpu, time.process_time() - start_cpu)
    print(f"import: {imported * 1000:.1f} ms; first scan (compiles the rules): {first_ms:.1f} ms")
    print(f"scan of 1 MB of source: {best * 1000:.1f} ms wall, {cpu * 1000:.1f} ms CPU (best of {opts.runs}; on a "
          f"busy machine the wall time is the larger); masks found: {first.masked}")


if __name__ == "__main__":
    main()
