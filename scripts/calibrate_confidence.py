"""Fit the confidence coefficients (``confidence_coefficients`` in weights.toml) on benchmark
runs, and show how well they hold on a set they were not fitted on.

Reads ``details.jsonl`` of ``excerpt bench localize --out DIR`` runs (each row carries the
confidence features of its first candidates and whether each is a gold file), fits a
logistic regression by Newton's method (plain Python: a handful of parameters), and prints:

- for each pair of sets, fitted on one and measured on the other: log loss, Brier score and
  the reliability table (predicted confidence against the observed share of gold files per
  bin), with the expected calibration error;
- primary precision and recall (per-task means) at a range of thresholds, per set;
- the coefficients fitted on all sets, as TOML lines for weights.toml.

Usage::

    python scripts/calibrate_confidence.py --set swe=/tmp/b/swe --set ml=/tmp/b/ml
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from excerpt.rank.confidence import FEATURES, logistic

Rows = list[dict[str, Any]]
_BINS = 10
_RIDGE = 1.0
_THRESHOLDS = (0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7)
_FLOORS = (0.005, 0.01, 0.02, 0.03, 0.05, 0.08, 0.1)


def load(directory: Path) -> Rows:
    with (directory / "details.jsonl").open(encoding="utf-8") as fh:
        return [row for row in map(json.loads, fh) if row.get("calibration")]


def samples(rows: Rows) -> tuple[list[list[float]], list[int]]:
    xs: list[list[float]] = []
    ys: list[int] = []
    for row in rows:
        xs.extend(row["calibration"]["x"])
        ys.extend(row["calibration"]["y"])
    return xs, ys


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting (``a`` is small and positive definite)."""
    n = len(b)
    m = [[*row, b[i]] for i, row in enumerate(a)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(n):
            if r != col and m[r][col]:
                f = m[r][col] / m[col][col]
                m[r] = [x - f * y for x, y in zip(m[r], m[col], strict=True)]
    return [m[i][n] / m[i][i] for i in range(n)]


def fit(xs: Sequence[Sequence[float]], ys: Sequence[int], rounds: int = 25) -> list[float]:
    """Ridge logistic regression (the bias not penalised) by Newton's method."""
    k = len(xs[0]) if xs else len(FEATURES)
    w = [0.0] * k
    for _ in range(rounds):
        grad = [(_RIDGE * w[j] if j else 0.0) for j in range(k)]
        hess = [[(_RIDGE if i == j and i else 0.0) for j in range(k)] for i in range(k)]
        for x, y in zip(xs, ys, strict=True):
            p = logistic(x, w)
            d = p * (1.0 - p)
            for i in range(k):
                grad[i] += (p - y) * x[i]
                if x[i]:
                    row = hess[i]
                    for j in range(k):
                        row[j] += d * x[i] * x[j]
        step = _solve(hess, grad)
        w = [a - b for a, b in zip(w, step, strict=True)]
        if max(abs(s) for s in step) < 1e-7:
            break
    return w


def reliability(xs: Sequence[Sequence[float]], ys: Sequence[int], w: Sequence[float]) -> str:
    bins: list[list[tuple[float, int]]] = [[] for _ in range(_BINS)]
    loss = brier = 0.0
    for x, y in zip(xs, ys, strict=True):
        p = logistic(x, w)
        bins[min(int(p * _BINS), _BINS - 1)].append((p, y))
        q = min(max(p, 1e-9), 1 - 1e-9)
        loss -= y * math.log(q) + (1 - y) * math.log(1 - q)
        brier += (p - y) ** 2
    n = len(ys)
    lines = [
        "| confidence | candidates | mean predicted | observed gold share |",
        "|---|---|---|---|",
    ]
    ece = 0.0
    for i, b in enumerate(bins):
        if not b:
            continue
        pred = sum(p for p, _ in b) / len(b)
        seen = sum(y for _, y in b) / len(b)
        ece += len(b) / n * abs(pred - seen)
        lines.append(
            f"| {i / _BINS:.1f}-{(i + 1) / _BINS:.1f} | {len(b)} | {pred:.3f} | {seen:.3f} |"
        )
    head = f"log loss {loss / n:.4f}, Brier {brier / n:.4f}, ECE {ece:.4f} ({n} candidates)"
    return head + "\n" + "\n".join(lines)


def primary_figures(rows: Rows, w: Sequence[float], threshold: float) -> tuple[float, float, float]:
    """Per-task mean precision and recall of the primary set (the first candidate, and every
    one at least ``threshold`` confident), and the mean number of primary files."""
    precision, recall, sizes = [], [], []
    for row in rows:
        gold = set(row["gold"])
        if not gold or not row["calibration"]["x"]:
            continue
        picked = [
            y
            for n, (x, y) in enumerate(
                zip(row["calibration"]["x"], row["calibration"]["y"], strict=True)
            )
            if n == 0 or logistic(x, w) >= threshold
        ]
        precision.append(sum(picked) / len(picked))
        recall.append(sum(picked) / len(gold))
        sizes.append(len(picked))
    n = max(len(recall), 1)
    return sum(precision) / n, sum(recall) / n, sum(sizes) / n


def floor_figures(rows: Rows, w: Sequence[float], floor: float) -> tuple[float, float]:
    """The share of gold files among the first candidates whose confidence is below
    ``floor`` (what a pack stopping there leaves out), and the mean number of candidates a
    task keeps at or above it."""
    below = gold = kept = 0
    for row in rows:
        for x, y in zip(row["calibration"]["x"], row["calibration"]["y"], strict=True):
            p = logistic(x, w)
            kept += p >= floor
            gold += y
            below += y and p < floor
    return below / max(gold, 1), kept / max(len(rows), 1)


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--set", action="append", required=True, metavar="NAME=DIR")
    args = parser.parse_args(argv)
    sets = {name: load(Path(d)) for name, _, d in (s.partition("=") for s in args.set)}
    for name, rows in sets.items():
        print(f"{name}: {len(rows)} tasks, {len(samples(rows)[1])} candidates")
    for train, test in ((a, b) for a in sets for b in sets if a != b):
        w = fit(*samples(sets[train]))
        print(f"\n## fitted on {train}, measured on {test}\n")
        print(reliability(*samples(sets[test]), w))
    everything = [r for rows in sets.values() for r in rows]
    w = fit(*samples(everything))
    print("\n## fitted on all sets, measured on each\n")
    for name, rows in sets.items():
        print(f"### {name}\n{reliability(*samples(rows), w)}\n")
    print("## primary precision / recall / files per task, by threshold (fitted on all)\n")
    print("| threshold | " + " | ".join(sets) + " |")
    print("|---|" + "---|" * len(sets))
    for t in _THRESHOLDS:
        cells = [
            "{:.3f} / {:.3f} / {:.2f}".format(*primary_figures(rows, w, t))
            for rows in sets.values()
        ]
        print(f"| {t:.2f} | " + " | ".join(cells) + " |")
    print("\n## gold files below a floor / candidates kept per task, by floor\n")
    print("| floor | " + " | ".join(sets) + " |")
    print("|---|" + "---|" * len(sets))
    for f in _FLOORS:
        cells = ["{:.3f} / {:.1f}".format(*floor_figures(rows, w, f)) for rows in sets.values()]
        print(f"| {f:.3f} | " + " | ".join(cells) + " |")
    print("\nconfidence_coefficients = [" + ", ".join(f"{c:.4f}" for c in w) + "]")
    for name, c in zip(FEATURES, w, strict=True):
        print(f"#   {name:>13} {c:+.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
