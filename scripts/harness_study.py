"""Compare `excerpt harness` with what repositories' own CI runs.

Input: a JSON list of repositories, each ``{"repo", "dir", "test": [{"command", ...}],
"primary_test": {"command"}}`` — the test commands read by hand from each repository's CI
files. For each repository this runs the inference twice, from manifests alone (``--no-ci``)
and with CI files as evidence, and counts a CI test command as found when an inferred
validate command does the same job (same tool and script/target/goal, flags aside; Maven
``verify``/``install``/``package``/default goal and Gradle ``check``/``build``/``allTests``
run the tests that ``test`` runs).

    python scripts/harness_study.py ci_commands.json [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from excerpt.harness import infer_harness
from excerpt.harness.ci import signatures

_SPLIT = re.compile(r"\s*(?:&&|\|\||;|\||\n)\s*")
_MAVEN_TESTING = {"test", "verify", "install", "package", ""}
_GRADLE_TESTING = {"test", "check", "build", "allTests"}


def _canonical(sig: tuple[str, str]) -> tuple[str, str]:
    tool, job = sig
    if tool == "maven" and job in _MAVEN_TESTING:
        return ("maven", "test")
    if tool == "gradle" and job in _GRADLE_TESTING:
        return ("gradle", "test")
    return sig


def _sigs(command: str) -> set[tuple[str, str]]:
    out = set()
    for part in _SPLIT.split(command):
        words = part.split()
        if (
            words
            and Path(words[0]).name in ("mvn", "mvnw")
            and not any(not w.startswith("-") for w in words[1:])
        ):
            out.add(("maven", ""))  # the pom's default goal
        out.update(signatures(part))
    return {_canonical(s) for s in out}


def _found(ci_command: str, inferred: set[tuple[str, str]]) -> bool:
    return bool(_sigs(ci_command) & inferred)


def study(entries: list[dict[str, Any]]) -> dict[str, Any]:
    rows = []
    for entry in entries:
        row: dict[str, Any] = {
            "repo": entry["repo"],
            "ci_test": [t["command"] for t in entry["test"]],
        }
        for mode, use_ci in (("manifests", False), ("with_ci", True)):
            harness = infer_harness(entry["dir"], use_ci=use_ci)
            inferred = {s for c in harness.validate for s in _sigs(c.command)}
            found = [_found(t["command"], inferred) for t in entry["test"]]
            primary = entry.get("primary_test", {}).get("command")
            row[mode] = {
                "validate": [c.command for c in harness.validate if c.kind == "test"],
                "found": sum(found),
                "of": len(found),
                "primary_found": bool(primary) and _found(primary, inferred),
            }
        rows.append(row)
    summary = {}
    for mode in ("manifests", "with_ci"):
        found = sum(r[mode]["found"] for r in rows)
        total = sum(r[mode]["of"] for r in rows)
        summary[mode] = {
            "ci_test_commands_found": found,
            "ci_test_commands": total,
            "rate": round(found / total, 3) if total else 0.0,
            "repos_macro_rate": round(
                sum(r[mode]["found"] / r[mode]["of"] for r in rows if r[mode]["of"]) / len(rows), 3
            ),
            "primary_found": sum(r[mode]["primary_found"] for r in rows),
            "repos": len(rows),
        }
    return {"rows": rows, "summary": summary}


def _markdown(doc: dict[str, Any]) -> str:
    lines = [
        "| repository | inferred test commands (manifests only) | CI test commands"
        " | found (manifests / +CI) |",
        "| --- | --- | --- | --- |",
    ]
    for r in doc["rows"]:
        inferred = "; ".join(f"`{c}`" for c in r["manifests"]["validate"][:4]) or "—"
        ci = "; ".join(f"`{c}`" for c in r["ci_test"][:3])
        if len(r["ci_test"]) > 3:
            ci += f"; … ({len(r['ci_test'])} in all)"
        m, w = r["manifests"], r["with_ci"]
        lines.append(
            f"| {r['repo']} | {inferred} | {ci} | {m['found']}/{m['of']} / {w['found']}/{w['of']} |"
        )
    lines.append("")
    for mode, s in doc["summary"].items():
        lines.append(
            f"- {mode}: {s['ci_test_commands_found']}/{s['ci_test_commands']} CI test commands"
            f" found ({s['rate']:.1%}); per-repository mean {s['repos_macro_rate']:.1%}; main"
            f" test command found in {s['primary_found']}/{s['repos']} repositories"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ground_truth", type=Path)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    doc = study(json.loads(args.ground_truth.read_text(encoding="utf-8")))
    sys.stdout.write(json.dumps(doc, indent=1) + "\n" if args.json else _markdown(doc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
