"""A self-contained HTML report: metric against floor per suite, the savings distribution and
the three-way category table, as inline SVG. Pure; viewable offline."""

from __future__ import annotations

from html import escape
from typing import Any

__all__ = ["render_html"]

_W = 320


def _bar(value: float, floor: float | None) -> str:
    fill = "#2f855a" if floor is None or value >= floor - 1e-9 else "#c53030"
    width = max(0.0, min(1.0, value)) * _W
    mark = ""
    if floor is not None:
        x = max(0.0, min(1.0, floor)) * _W
        mark = f'<line x1="{x:.1f}" y1="0" x2="{x:.1f}" y2="18" stroke="#1a202c" stroke-width="2"/>'
    return (
        f'<svg width="{_W}" height="18" role="img"><rect width="{_W}" height="18" fill="#edf2f7"/>'
        f'<rect width="{width:.1f}" height="18" fill="{fill}"/>{mark}</svg>'
    )


def _suite(name: str, suite: dict[str, Any]) -> str:
    rows = []
    for metric, value in suite["metrics"].items():
        floor = suite["thresholds"].get(metric)
        shown = "—" if floor is None else f"{floor:.3f}"
        rows.append(
            f"<tr><td>{escape(metric)}</td><td>{value:.3f}</td><td>{shown}</td>"
            f"<td>{_bar(float(value), floor)}</td></tr>"
        )
    verdict = "pass" if suite["pass"] else "FAIL"
    return (
        f"<h2>{escape(name)} — {verdict} ({suite['passed']}/{suite['cases']} cases)</h2>"
        "<table><tr><th>metric</th><th>value</th><th>floor</th><th></th></tr>"
        + "".join(rows)
        + "</table>"
    )


def _histogram(values: list[float]) -> str:
    buckets = [0] * 10
    for v in values:
        buckets[min(9, max(0, int(v * 10)))] += 1
    top = max(buckets) or 1
    bars = "".join(
        f'<rect x="{i * 32}" y="{100 - 100 * n / top:.1f}" width="28" height="{100 * n / top:.1f}"'
        f' fill="#3182ce"><title>{i * 10}-{i * 10 + 10}%: {n}</title></rect>'
        for i, n in enumerate(buckets)
    )
    caption = "<p>saving vs naive dump, 0% → 100%</p>"
    return f'<svg width="320" height="110" role="img">{bars}</svg>{caption}'


def _categories(table: dict[str, Any]) -> str:
    head = "<tr><th>category</th>" + "".join(
        f"<th>{arm} lines</th><th>{arm} files</th>" for arm in ("lexical", "+changed", "+graph")
    )
    rows = "".join(
        f"<tr><td>{escape(cat)}</td>"
        + "".join(
            f"<td>{arms[a]['line_coverage']:.2f}</td><td>{arms[a]['file_recall']:.2f}</td>"
            for a in ("lexical", "+changed", "+graph")
        )
        + "</tr>"
        for cat, arms in table.items()
    )
    return f"<h3>Equal-budget comparison</h3><table>{head}</tr>{rows}</table>"


def render_html(report: dict[str, Any]) -> str:
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>excerpt eval</title>",
        "<style>body{font:14px system-ui,sans-serif;margin:2em}td,th{padding:2px 8px;"
        "text-align:left}table{border-collapse:collapse}tr:nth-child(even){background:#f7fafc}"
        "</style></head><body>",
        f"<h1>excerpt evaluation — {'pass' if report['pass'] else 'FAIL'}</h1>",
    ]
    for name, suite in report["suites"].items():
        parts.append(_suite(name, suite))
        if name == "savings" and suite.get("details"):
            parts.append(_histogram([d["saving_vs_naive"] for d in suite["details"]]))
        if suite.get("tables", {}).get("categories"):
            parts.append(_categories(suite["tables"]["categories"]))
    parts.append("</body></html>\n")
    return "".join(parts)
