"""A synthetic source tree for ``bench perf``: mixed languages, a long-tailed size
distribution and an import structure, the same bytes for the same ``(files, seed)``.

Python 50%, TypeScript 20%, Go 15%, Rust 10%, Markdown 5%; 100 files a package; file
lengths log-normal (median about 60 lines, a tail to 2,000); each source file imports up to
three files of earlier packages, so the graph has the shape of a layered code base.
"""

from __future__ import annotations

import random
from pathlib import Path

__all__ = ["write_tree"]

_LANGUAGES = (("py", 50), ("ts", 20), ("go", 15), ("rs", 10), ("md", 5))
_WORDS = [
    "invoice",
    "order",
    "refund",
    "payment",
    "cart",
    "price",
    "total",
    "tax",
    "discount",
    "ledger",
    "account",
    "balance",
    "user",
    "session",
    "token",
    "cache",
    "index",
    "query",
    "route",
    "handler",
    "config",
    "parse",
    "render",
    "encode",
    "decode",
    "stream",
    "buffer",
    "queue",
    "worker",
    "task",
    "retry",
    "timeout",
    "limit",
    "window",
    "batch",
    "merge",
    "split",
    "filter",
]


def _name(rng: random.Random) -> str:
    return "_".join(rng.sample(_WORDS, 2))


def _body(ext: str, rng: random.Random, lines: int, imports: list[tuple[int, str]]) -> str:
    out: list[str] = []
    for pkg, mod in imports:
        if ext == "py":
            out.append(f"from pkg{pkg}.{mod} import {mod}_main")
        elif ext == "ts":
            out.append(f'import {{ {mod}Main }} from "../pkg{pkg}/{mod}";')
        elif ext == "go":
            out.append(f'import "example.com/synthetic/pkg{pkg}"')
        elif ext == "rs":
            out.append(f"use crate::pkg{pkg}::{mod};")
    while len(out) < lines:
        fn = _name(rng)
        if ext == "py":
            out += [f"def {fn}(value, limit=10):", f'    """Apply {fn.replace("_", " ")}."""']
            out += [f"    value = value + {rng.randrange(100)}", "    return value", ""]
        elif ext == "ts":
            out += [f"export function {fn}(value: number): number {{"]
            out += [f"  return value * {rng.randrange(100)};", "}", ""]
        elif ext == "go":
            out += [f"func {fn.title().replace('_', '')}(value int) int {{"]
            out += [f"\treturn value + {rng.randrange(100)}", "}", ""]
        elif ext == "rs":
            out += [f"pub fn {fn}(value: i64) -> i64 {{", f"    value + {rng.randrange(100)}"]
            out += ["}", ""]
        else:
            out += [f"## {fn.replace('_', ' ').title()}", "", f"How {fn} works, in prose.", ""]
    return "\n".join(out[:lines]) + "\n"


def write_tree(root: Path, files: int, seed: int = 0) -> Path:
    """Write ``files`` files under ``root`` (created), deterministically; returns ``root``."""
    rng = random.Random(seed)
    weights = [w for _, w in _LANGUAGES]
    exts = [e for e, _ in _LANGUAGES]
    root.mkdir(parents=True, exist_ok=True)
    for n in range(files):
        pkg = n // 100
        ext = rng.choices(exts, weights)[0]
        mod = f"mod{n}"
        lines = max(5, min(2000, int(rng.lognormvariate(4.1, 0.9))))
        earlier = [(p, f"mod{rng.randrange(p * 100, p * 100 + 100)}") for p in range(pkg)]
        imports = rng.sample(earlier, min(3, len(earlier))) if ext != "md" else []
        if ext == "go":
            imports = imports[:1]
        directory = root / f"pkg{pkg}"
        directory.mkdir(exist_ok=True)
        header = f"package pkg{pkg}\n\n" if ext == "go" else ""
        text = header + _body(ext, rng, lines, imports)
        (directory / f"{mod}.{ext}").write_text(text, encoding="utf-8")
    (root / "README.md").write_text("# synthetic tree\n", encoding="utf-8")
    return root
