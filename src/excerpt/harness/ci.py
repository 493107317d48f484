"""CI workflow run steps, and the signature that says when two commands do the same job.

A signature names the job of a simple command, not its spelling: ``npm test``, ``pnpm run
test`` and ``yarn test`` all run the ``test`` script; ``uv run pytest -x`` and ``python -m
pytest`` both run pytest; ``cargo +nightly test --all-features`` is ``cargo test``.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath

import yaml

from excerpt.harness.files import RepoFiles
from excerpt.harness.model import Kind

__all__ = ["UNKNOWN_DIR", "CiStep", "ci_steps", "kind_of", "signatures"]

Signature = tuple[str, str]

_AUXILIARY = frozenset(
    {
        "doc", "docs", "documentation", "release", "releases", "publish", "deploy",
        "deployment", "pages", "bench", "benchmark", "benchmarks", "stale", "label", "labels",
        "labeler", "triage", "notify",
    }
)  # fmt: skip
UNKNOWN_DIR = "?"  # a directory CI computes at run time: its steps corroborate nothing
_EXPRESSION = re.compile(r"\$\{\{.*?\}\}")
_REDIRECT = re.compile(r"\d?[<>]")
_NUMERIC_FLAGS = frozenset({"-j", "--jobs", "-l", "--load-average"})  # value optional
_WRAPPERS = frozenset({"sudo", "time", "env", "command", "exec", "nohup"})
_SPLIT = re.compile(r"\s*(?:&&|\|\||;|\|)\s*")
_PY_RUNNERS = {"uv": "run", "poetry": "run", "pdm": "run", "pipenv": "run", "rye": "run"}
_UV_VALUE_FLAGS = frozenset(
    {"--with", "--extra", "--group", "-p", "--python", "--package", "--directory", "--env-file"}
)
_NODE_VALUE_FLAGS = frozenset(
    {"--filter", "-F", "-C", "--dir", "--prefix", "-w", "--workspace", "--cwd", "--cache-folder"}
)
_NODE_BUILTINS = frozenset({"install", "i", "ci", "add", "exec", "dlx", "x", "run", "run-script"})
_TOOLS = frozenset(
    {
        "pytest", "tox", "nox", "mypy", "pyright", "flake8", "pylint", "black", "isort",
        "tsc", "eslint", "prettier", "jest", "vitest", "mocha", "ava", "playwright",
        "golangci-lint", "unittest",
    }
)  # fmt: skip
_TOOL_KINDS: dict[str, Kind] = {
    "pytest": "test", "tox": "test", "nox": "test", "unittest": "test", "jest": "test",
    "vitest": "test", "mocha": "test", "ava": "test", "playwright": "test",
    "mypy": "typecheck", "pyright": "typecheck", "tsc": "typecheck",
    "ruff": "lint", "flake8": "lint", "pylint": "lint", "black": "lint", "isort": "lint",
    "eslint": "lint", "prettier": "lint", "golangci-lint": "lint",
}  # fmt: skip
_SUB_KINDS: dict[tuple[str, str], Kind] = {
    ("go", "test"): "test", ("go", "vet"): "lint", ("go", "build"): "build",
    ("go", "mod"): "install", ("cargo", "test"): "test", ("cargo", "build"): "build",
    ("cargo", "clippy"): "lint", ("cargo", "fmt"): "lint", ("cargo", "check"): "build",
    ("cargo", "fetch"): "install", ("deno", "test"): "test", ("deno", "lint"): "lint",
    ("deno", "check"): "typecheck",
    ("meson", "test"): "test", ("meson", "compile"): "build",
    ("maven", "test"): "test", ("maven", "verify"): "test",
    ("maven", "install"): "test", ("maven", "package"): "build", ("gradle", "test"): "test",
    ("gradle", "check"): "test", ("gradle", "build"): "test", ("gradle", "assemble"): "build",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class CiStep:
    """One simple command that a CI file runs, where it is written and where it runs."""

    file: str
    line: int
    command: str
    directory: str
    job: str

    @property
    def auxiliary(self) -> bool:
        """True for documentation, release, deployment and benchmark jobs: not validation."""
        words = re.split(r"[^a-z0-9]+", f"{self.file} {self.job}".lower())
        return not _AUXILIARY.isdisjoint(words)

    @property
    def evidence(self) -> str:
        return f"{self.file}:{self.line}"


def _is_ci_file(path: str) -> bool:
    if path.startswith(".github/workflows/") and path.endswith((".yml", ".yaml")):
        return "/" not in path[len(".github/workflows/") :]
    return path in (".gitlab-ci.yml", ".circleci/config.yml")


def ci_steps(files: RepoFiles) -> list[CiStep]:
    """Every simple command of every CI run step, in file and line order."""
    out: list[CiStep] = []
    for path in files.paths:
        if not _is_ci_file(path):
            continue
        text = files.text(path)
        if text is None:
            continue
        try:
            root = yaml.compose(text, Loader=yaml.SafeLoader)
        except (yaml.YAMLError, RecursionError):
            continue
        for node, directory, job in _run_nodes(root):
            out += _steps(path, node, directory, job)
    return out


def _get(node: yaml.Node | None, key: str) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == key and isinstance(v, yaml.Node):
                return v
    return None


def _scalar(node: yaml.Node | None) -> str | None:
    return node.value if isinstance(node, yaml.ScalarNode) else None


def _run_nodes(root: yaml.Node | None) -> Iterator[tuple[yaml.ScalarNode, str, str]]:
    """``run:`` scalars of GitHub jobs, ``script:`` items of GitLab jobs, CircleCI ``run``."""
    if not isinstance(root, yaml.MappingNode):
        return
    jobs = _get(root, "jobs")
    job_nodes = list(jobs.value) if isinstance(jobs, yaml.MappingNode) else []
    if jobs is None:  # GitLab: jobs are top-level mappings
        job_nodes = [(k, v) for k, v in root.value if isinstance(v, yaml.MappingNode)]
    for key, job in job_nodes:
        name = f"{_scalar(key) or ''} {_scalar(_get(job, 'name')) or ''}"
        default_dir = _scalar(_get(_get(_get(job, "defaults"), "run"), "working-directory"))
        steps = _get(job, "steps")
        for step in steps.value if isinstance(steps, yaml.SequenceNode) else []:
            run = _get(step, "run")
            if isinstance(run, yaml.MappingNode):  # CircleCI: run: {command: ...}
                run = _get(run, "command")
            directory = _scalar(_get(step, "working-directory")) or default_dir or "."
            if isinstance(run, yaml.ScalarNode):
                step_name = _scalar(_get(step, "name")) or ""
                yield run, _normal_dir(directory), f"{name} {step_name}"
        for key in ("before_script", "script"):
            script = _get(job, key)
            items = script.value if isinstance(script, yaml.SequenceNode) else [script]
            for item in items:
                if isinstance(item, yaml.ScalarNode):
                    yield item, ".", name


def _normal_dir(directory: str, base: str = ".") -> str:
    """A repository-relative directory, or ``UNKNOWN_DIR`` when CI decides it at run time
    or it leaves the checkout."""
    directory = directory.strip().strip("\"'")
    if "$" in directory or directory.startswith(("/", "~")) or base == UNKNOWN_DIR:
        return UNKNOWN_DIR
    joined = PurePosixPath(base) / directory.removeprefix("./")
    parts: list[str] = []
    for part in joined.parts:
        if part == "..":
            if not parts:
                return UNKNOWN_DIR
            parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts) or "."


def _steps(path: str, node: yaml.ScalarNode, directory: str, job: str) -> list[CiStep]:
    first = node.start_mark.line + 1 + (1 if node.style in ("|", ">") else 0)
    out = []
    pending: list[str] = []
    start = first
    here = directory  # a `cd` holds for the rest of the script
    for offset, raw in enumerate(node.value.splitlines()):
        line = raw.strip()
        if not pending:
            start = first + offset
        if line.endswith("\\"):
            pending.append(line[:-1].strip())
            continue
        logical = " ".join([*pending, line]).strip()
        pending = []
        if not logical or logical.startswith("#"):
            continue
        for part in _SPLIT.split(logical):
            if part.startswith("cd "):
                here = _normal_dir(part[3:], here)
            elif part:
                out.append(CiStep(path, start, part, here, job))
    return out


def _words(command: str) -> list[str]:
    command = _EXPRESSION.sub("${{}}", command)  # a CI expression is one opaque word
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        words = command.split()
    redirect = next((i for i, w in enumerate(words) if _REDIRECT.match(w)), len(words))
    words = words[:redirect]
    while words and (re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]) or words[0] in _WRAPPERS):
        words = words[1:]
    return words


def _skip_flags(words: list[str], value_flags: frozenset[str]) -> list[str]:
    """The positional words, without flags and the values that flags take."""
    out = []
    i = 0
    while i < len(words):
        w = words[i]
        if w.startswith("-"):
            following = words[i + 1] if i + 1 < len(words) else ""
            if w in value_flags or (w in _NUMERIC_FLAGS and following.isdigit()):
                i += 1
        else:
            out.append(w)
        i += 1
    return out


def signatures(command: str) -> list[Signature]:
    """What a simple command does, as ``(tool, job)`` pairs; empty when not recognised."""
    return _sig(_words(command))


def _sig(words: list[str]) -> list[Signature]:
    if not words:
        return []
    head = PurePosixPath(words[0]).name
    rule = _RULES.get(head)
    if rule is None and _PYTHON.fullmatch(head):
        rule = _python
    elif rule is None and head in _TOOLS:
        rule = _tool
    return rule(head, words[1:]) if rule is not None else []


def _py_runner(head: str, rest: list[str]) -> list[Signature]:
    """uv, poetry, pdm, pipenv, rye: ``run`` runs the command after it; sync/install."""
    if rest[:1] == [_PY_RUNNERS[head]]:
        args = _skip_flags(rest[1:], _UV_VALUE_FLAGS)
        return _sig(args) if args else []
    if head != "rye" and rest[:1] in (["sync"], ["install"]):
        return [("install", "python")]
    if head == "uv" and "install" in rest[:2]:  # uv pip install
        return [("install", "python")]
    return []


def _pip(head: str, rest: list[str]) -> list[Signature]:
    return [("install", "python")] if "install" in rest[:2] else []


def _python(head: str, rest: list[str]) -> list[Signature]:
    return _sig(rest[1:]) if rest[:1] == ["-m"] and len(rest) > 1 else []


def _coverage(head: str, rest: list[str]) -> list[Signature]:
    if rest[:1] != ["run"]:
        return []
    args = rest[1:]
    while args and args[0].startswith("-") and args[0] != "-m":
        args = args[1:]
    return _sig(args[1:]) if args[:1] == ["-m"] else []


def _hatch(head: str, rest: list[str]) -> list[Signature]:
    if rest[:1] == ["test"]:
        return [("pytest", "")]
    if rest[:1] == ["run"] and len(rest) > 1:
        target = rest[1].split(":")[-1]
        return _sig([target, *rest[2:]]) if target in _TOOLS else [("hatch", target)]
    return []


def _ruff(head: str, rest: list[str]) -> list[Signature]:
    sub = rest[0] if rest and not rest[0].startswith("-") and rest[0] != "." else "check"
    return [("ruff", sub)]


def _tool(head: str, rest: list[str]) -> list[Signature]:
    return [("install", head)] if rest[:1] == ["install"] else [(head, "")]


def _subcommand(head: str, rest: list[str]) -> list[Signature]:
    """meson, deno, go: the job is the subcommand."""
    return [(head, rest[0])] if rest else []


def _cargo(head: str, rest: list[str]) -> list[Signature]:
    args = [w for w in rest if not w.startswith("+")]
    if args[:2] == ["nextest", "run"]:
        return [("cargo", "test")]
    return [("cargo", args[0])] if args else []


def _maven(head: str, rest: list[str]) -> list[Signature]:
    goals = _skip_flags(rest, frozenset({"-f", "-pl", "-P"}))
    return [("maven", g) for g in goals if ":" not in g]


def _gradle(head: str, rest: list[str]) -> list[Signature]:
    return [("gradle", t.split(":")[-1]) for t in _skip_flags(rest, frozenset({"-p"}))]


def _make(head: str, rest: list[str]) -> list[Signature]:
    tool = "just" if head == "just" else "make"
    targets = _skip_flags(rest, frozenset({"-C", "-f", "--directory", "--justfile"}))
    return [(tool, t) for t in targets if "=" not in t] or [(tool, "")]


def _node(head: str, rest: list[str]) -> list[Signature]:
    if head in ("npx", "bunx"):
        args = _skip_flags(rest, frozenset({"-p", "--package"}))
        return _sig(args) if args and args[0] in _TOOLS else []
    args = _skip_flags(rest, _NODE_VALUE_FLAGS)
    yarn_each = args[:2] == ["workspaces", "foreach"] or (args[:1] == ["workspace"] and args[2:])
    if head == "yarn" and yarn_each:
        args = args[2:]
    if not args or args[0] in ("install", "i", "ci"):
        return [("install", "node")] if head != "npm" or args else []
    if args[0] in ("exec", "dlx", "x"):
        return _sig(args[1:]) if len(args) > 1 and args[1] in _TOOLS else []
    if args[0] in ("run", "run-script") and len(args) > 1:
        return [("script", args[1])]
    if args[0] in ("test", "t") and head != "bun":
        return [("script", "test")]
    if head == "bun" and args[0] == "test":
        return [("bun", "test")]
    if head != "npm" and args[0] not in _NODE_BUILTINS:
        return [("script", args[0])]  # pnpm/yarn/bun run a script named as the command
    return []


_Rule = Callable[[str, list[str]], list[Signature]]
# What a command does, by its first word (a python interpreter and the tools in _TOOLS
# are recognised in _sig itself).
_RULES: dict[str, _Rule] = {
    **dict.fromkeys(_PY_RUNNERS, _py_runner),
    **dict.fromkeys(("pip", "pip3"), _pip),
    "coverage": _coverage,
    "hatch": _hatch,
    **dict.fromkeys(("npm", "pnpm", "yarn", "bun", "npx", "bunx"), _node),
    "py.test": lambda head, rest: [("pytest", "")],
    "ruff": _ruff,
    **dict.fromkeys(("meson", "deno", "go"), _subcommand),
    "cargo": _cargo,
    **dict.fromkeys(("mvn", "mvnw"), _maven),
    **dict.fromkeys(("gradle", "gradlew"), _gradle),
    **dict.fromkeys(("make", "gmake", "just"), _make),
}
_PYTHON = re.compile(r"python(\d(\.\d+)?)?|py")


def kind_of(sig: Signature) -> Kind | None:
    """The kind of job a signature does, when it is one a harness reports."""
    tool, job = sig
    if tool == "install":
        return "install"
    if tool in ("script", "hatch", "make", "just"):
        name = job.lower()
        for word, kind in (
            ("typecheck", "typecheck"), ("type-check", "typecheck"), ("tsc", "typecheck"),
            ("types", "typecheck"), ("typing", "typecheck"), ("mypy", "typecheck"),
            ("lint", "lint"), ("style", "lint"), ("test", "test"),
            ("build", "build"),
        ):  # fmt: skip
            if word in name:
                return kind  # type: ignore[return-value]
        return None
    if (tool, job) in _SUB_KINDS:
        return _SUB_KINDS[(tool, job)]
    if tool == "bun":
        return "test"
    return _TOOL_KINDS.get(tool)
