"""Fit the region coefficients (``region_coefficients`` in weights.toml) on benchmark runs,
and show how well they hold on a set they were not fitted on.

Reads ``details.jsonl`` of ``excerpt bench localize --out DIR`` runs: each row carries, for
the regions of its gold files among the first candidates, the features named in
``excerpt.pack.build.REGION_FEATURES`` and whether the region holds a changed line. Fits a
ridge logistic regression by Newton's method (``calibrate_confidence.fit``) and prints, for
each pair of sets fitted on one and measured on the other, the log loss beside the log loss
of the base rate; then the coefficients fitted on all sets, as a TOML line.

Usage::

    python scripts/calibrate_regions.py --set swe=/tmp/b/swe --set ml=/tmp/b/ml
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path

from calibrate_confidence import fit

from excerpt.pack.build import REGION_FEATURES
from excerpt.rank.confidence import logistic

Samples = tuple[list[list[float]], list[int]]


def load(directory: Path) -> Samples:
    xs: list[list[float]] = []
    ys: list[int] = []
    with (directory / "details.jsonl").open(encoding="utf-8") as fh:
        for row in map(json.loads, fh):
            found = row.get("region_calibration") or {"x": [], "y": []}
            xs += found["x"]
            ys += found["y"]
    return xs, ys


def log_loss(xs: Sequence[Sequence[float]], ys: Sequence[int], w: Sequence[float]) -> float:
    total = 0.0
    for x, y in zip(xs, ys, strict=True):
        p = min(max(logistic(x, w), 1e-9), 1 - 1e-9)
        total -= y * math.log(p) + (1 - y) * math.log(1 - p)
    return total / len(ys) if ys else 0.0


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", action="append", required=True, metavar="NAME=DIR")
    args = parser.parse_args(argv)
    sets = {}
    for spec in args.set:
        name, _, directory = spec.partition("=")
        sets[name] = load(Path(directory))
        if not sets[name][1]:
            print(f"{name}: no region rows in {directory}/details.jsonl", file=sys.stderr)
            return 2
    for a, (xa, ya) in sets.items():
        w = fit(xa, ya)
        for b, (xb, yb) in sets.items():
            if a == b:
                continue
            rate = sum(yb) / len(yb)
            base = [math.log(rate / (1 - rate))] + [0.0] * (len(REGION_FEATURES) - 1)
            print(
                f"fitted on {a} ({len(ya)} regions), measured on {b} ({len(yb)}): log loss"
                f" {log_loss(xb, yb, w):.4f} (base rate {rate:.3f}: {log_loss(xb, yb, base):.4f})"
            )
    xs = [x for s in sets.values() for x in s[0]]
    ys = [y for s in sets.values() for y in s[1]]
    w = fit(xs, ys)
    print(f"# {', '.join(REGION_FEATURES)}")
    print(f"region_coefficients = [{', '.join(f'{v:.4f}' for v in w)}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
