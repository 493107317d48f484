"""Outside a git work tree, discovery keeps exactly the files git would list.

A seeded generator builds small trees with ``.gitignore`` files (at the root and nested) and
an ``.excerptignore``, from patterns aimed at the tree's own names: negations, directory-only
patterns, ``**`` leading, in the middle and trailing, anchored paths, escapes (``\\#``,
``\\!``, an escaped trailing space), character classes (ranges, ``[!…]``, ``[[:alpha:]]``,
malformed ones), re-inclusion under an excluded directory, CRLF, a BOM, comments and blank
lines. Git is the oracle: all cases sit side by side in one work tree (a case's root
``.gitignore`` then has the case directory as its base, which is what it has at a root), and
two ``git ls-files --others -z`` calls list them all, once with ``--exclude-standard`` (the
``.gitignore`` files; ``.git/info/exclude`` is empty and no user excludes file is found) and
once with ``.excerptignore`` as the per-directory file (its lines alone, as git applies an
exclude file). Discovery must list (as candidates or omissions) what the first keeps, and
omit as ``excluded`` what the second drops of those.
"""

from __future__ import annotations

import os
import random
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from excerpt.core import git as gitmod
from excerpt.core.settings import Limits
from excerpt.discover.walk import discover

SEED = 16
CASES = 600  # the default run; the slow run tries SLOW_CASES
SLOW_CASES = 6000

# Names that make patterns interesting: dots, a leading '#'/'!', spaces at either end, glob
# characters and a backslash in the name itself, non-ASCII, a tab and a newline.
NAMES = (
    "a", "b", "c", "src", "lib", "doc", "sub", "x.y", "a.b.c", "Makefile", "main.go",
    "util.py", "README", "README.md", "t.txt", "foo.log", "keep.log", "Foo", "x1", "x-2",
    "_u", "ab", "abc", "aXb", ".hidden", "#hash", "!bang", " lead", "trail ", "sp ace",
    "q?", "[br]", "st*r", "back\\slash", "é.py", "a]b", "dash-", "tab\tx", "new\nline",
    "a-b", "a:b", "^x", "-", "b.a",
)  # fmt: skip
CLASSES = ("alpha", "digit", "alnum", "lower", "upper", "punct", "space", "xdigit", "print")
ODD_LINES = (
    "*", "!*/", "!*.*", "!**/Makefile", "# comment", "", "   ", "!", "/", "**", "***", "\\",
    "a\\", "**/", "*/", "!**/", "/*", "*.*", "!/", "//", "[", "[]", "[!]", "[[:bogus:]]",
    "foo**/bar", "a/**", "**/a/**/b", "\\#hash", "\\!bang", "trail\\ ", "#hash", "!bang",
)  # fmt: skip


@dataclass(slots=True)
class Case:
    """One generated tree: files (path -> bytes), ignore files among them."""

    number: int
    files: dict[str, bytes] = field(default_factory=dict)
    dirs: set[str] = field(default_factory=set)

    @property
    def name(self) -> str:
        return f"c{self.number:05d}"

    def describe(self) -> str:
        rules = {p: d for p, d in self.files.items() if p.endswith(("ignore",))}
        return f"case {self.number}: files {sorted(self.files)!r}, rules {rules!r}"


def _tree(rng: random.Random, case: Case) -> None:
    """Directories up to four deep and files in them, no name both a file and a directory."""
    taken: dict[str, set[str]] = {"": set()}
    for _ in range(rng.randint(0, 6)):
        parent = rng.choice(sorted(taken))
        if parent.count("/") >= 4:
            continue
        name = rng.choice(NAMES)
        if name in taken[parent]:
            continue
        taken[parent].add(name)
        path = f"{parent}{name}/"
        taken[path] = set()
        case.dirs.add(path)
    for _ in range(rng.randint(3, 18)):
        parent = rng.choice(sorted(taken))
        name = rng.choice(NAMES)
        if name in taken[parent]:
            continue
        taken[parent].add(name)
        case.files[f"{parent}{name}"] = b"x\n"


def _entries_under(case: Case, base: str) -> list[str]:
    """Paths of files and directories below ``base``, relative to it (no trailing slash)."""
    out = {p[len(base) :] for p in case.files if p.startswith(base)}
    out |= {d[len(base) : -1] for d in case.dirs if d.startswith(base) and d != base}
    return sorted(out) or ["a"]


def _class_for(rng: random.Random, ch: str) -> str:
    options = [
        f"[{ch}]",
        f"[!{ch}]",
        f"[^{ch}x]",
        f"[{chr(max(ord(ch) - 1, 33))}-{chr(ord(ch) + 1)}]",
        f"[]{ch}]",
        f"[{ch}-]",
        f"[[:{rng.choice(CLASSES)}:]]",
        f"[![:{rng.choice(CLASSES)}:]{ch}]",
        f"[\\{ch}]",
    ]
    return rng.choice(options)


def _wild(rng: random.Random, text: str) -> str:
    """``text`` with one glob edit that often still matches it."""
    if not text:
        return "*"
    i = rng.randrange(len(text))
    edit = rng.randrange(7)
    if text[i] in "/":
        edit = 2
    if edit == 0:
        return text[:i] + "?" + text[i + 1 :]
    if edit == 1:
        return text[:i] + "*"
    if edit == 2:
        return text[:i] + "*" + text[i:]
    if edit == 3:
        return "*" + text[i:]
    if edit == 4:
        return text[:i] + _class_for(rng, text[i]) + text[i + 1 :]
    if edit == 5:
        return text[:i] + "**" + text[i:]
    return text[:i] + "\\" + text[i:]  # an escaped character matches itself


def _escaped(text: str) -> str:
    """``text`` as a literal pattern: glob characters, a leading ``#``/``!`` and spaces at
    the end escaped."""
    out = "".join("\\" + c if c in "*?[\\" else c for c in text)
    if out.startswith(("#", "!")):
        out = "\\" + out
    if out.endswith(" "):
        out = out[:-1] + "\\ "
    return out


def _noise(rng: random.Random) -> str:
    """A short random line over glob syntax and the short names (parse corner cases)."""
    return "".join(rng.choice("ab/*?[]!^-\\:.") for _ in range(rng.randint(1, 9)))


def _pattern(rng: random.Random, case: Case, base: str) -> str:
    draw = rng.random()
    if draw < 0.1:
        return rng.choice(ODD_LINES)
    if draw < 0.18:
        return _noise(rng)
    target = rng.choice(_entries_under(case, base))
    if rng.random() < 0.4:
        target = target.rsplit("/", 1)[-1]  # a basename, matched at any depth
    text = _escaped(target)
    for _ in range(rng.choice((0, 0, 1, 1, 2, 3))):
        text = _wild(rng, text)
    shape = rng.randrange(10)
    if shape == 0:
        text = "/" + text
    elif shape == 1:
        text = "**/" + text
    elif shape == 2:
        text = text + "/**"
    elif shape == 3 and "/" in text:
        head, tail = text.split("/", 1)
        text = f"{head}/**/{tail}"
    if rng.random() < 0.3:
        text += "/"  # directories only
    if rng.random() < 0.35:
        text = "!" + text
    if rng.random() < 0.1:
        text += rng.choice(("  ", " ", "\t"))  # unescaped spaces are trimmed, a tab is not
    return text


def _escapes_nothing(line: str) -> bool:
    """A line ending in an unescaped backslash: git never matches it, and an
    ``.excerptignore`` holding one is refused as a mistake (a usage error)."""
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1


def _ignore_file(rng: random.Random, case: Case, base: str, *, own: bool = False) -> bytes:
    lines = [_pattern(rng, case, base) for _ in range(rng.randint(1, 7))]
    if rng.random() < 0.1:
        lines[rng.randrange(len(lines))] = "!*/"
        lines.insert(0, "*")
    lines = "\n".join(lines).split("\n")  # a name with a newline makes two lines
    if own:
        lines = [line for line in lines if not _escapes_nothing(line)] or ["*.log"]
    end = "\r\n" if rng.random() < 0.15 else "\n"
    text = end.join(lines) + ("" if rng.random() < 0.2 else end)
    data = text.encode("utf-8")
    return (b"\xef\xbb\xbf" + data) if rng.random() < 0.05 else data


def generate(number: int) -> Case:
    """Case ``number`` of the seeded sequence (the same on every run and machine)."""
    rng = random.Random(f"{SEED}:{number}")
    case = Case(number)
    _tree(rng, case)
    for base in ["", *sorted(case.dirs)]:
        if rng.random() < (0.85 if not base else 0.35) and f"{base}.gitignore" not in case.files:
            case.files[f"{base}.gitignore"] = _ignore_file(rng, case, base)
    if rng.random() < 0.4:
        case.files[".excerptignore"] = _ignore_file(rng, case, "", own=True)
    return case


def _write(root: Path, case: Case) -> None:
    for directory in case.dirs:
        (root / directory).mkdir(parents=True, exist_ok=True)
    for rel, data in case.files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def _git_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / "config"),
    )
    return env


def git_lists(work: Path, scratch: Path, *options: str) -> dict[str, set[str]]:
    """``git ls-files --others -z OPTIONS`` over ``work``, split by case directory."""
    git_dir = scratch / "oracle.git"
    env = _git_env(scratch)
    if not git_dir.exists():
        subprocess.run(
            ["git", "init", "-q", "--bare", str(git_dir)], env=env, check=True, capture_output=True
        )
    out = subprocess.run(
        [
            "git",
            f"--git-dir={git_dir}",
            f"--work-tree={work}",
            "ls-files",
            "--others",
            "-z",
            *options,
        ],
        cwd=work,
        env=env,
        check=True,
        capture_output=True,
    ).stdout
    listed: dict[str, set[str]] = {}
    for raw in out.split(b"\0"):
        if raw:
            case, _, rel = os.fsdecode(raw).partition("/")
            listed.setdefault(case, set()).add(rel)
    return listed


def _listed_by_discovery(root: Path) -> tuple[set[str], set[str]]:
    found = discover(root, Limits())
    assert not found.in_git
    kept = {c.path for c in found.candidates}
    kept |= {o.path for o in found.omitted if o.reason != "excluded"}
    return kept, {o.path for o in found.omitted if o.reason == "excluded"}


def mismatches(cases: list[Case], scratch: Path) -> Iterator[str]:
    """Each case where discovery and git disagree, described."""
    work = scratch / "work"
    for case in cases:
        _write(work / case.name, case)
    by_gitignore = git_lists(work, scratch, "--exclude-standard")
    by_excerptignore = git_lists(work, scratch, "--exclude-per-directory=.excerptignore")
    for case in cases:
        listed = by_gitignore.get(case.name, set())
        dropped = listed - by_excerptignore.get(case.name, set())
        try:
            kept, excluded = _listed_by_discovery((work / case.name).resolve())
        except Exception as exc:  # noqa: BLE001 - any failure is a disagreement to report
            yield f"{case.describe()}: discovery raised {exc!r}"
            continue
        expected = listed - dropped
        if (kept, excluded) != (expected, dropped):
            yield (
                f"{case.describe()}: kept only by discovery {sorted(kept - expected)},"
                f" kept only by git {sorted(expected - kept)},"
                f" excluded {sorted(excluded)} where git drops {sorted(dropped)}"
            )


def _check(count: int, scratch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cases = [generate(n) for n in range(count)]
    assert gitmod.work_tree_top(scratch) is None
    # every case lies outside git (checked once above): spare discovery its git call per case
    monkeypatch.setattr(gitmod, "work_tree_top", lambda root: None)
    found = list(mismatches(cases, scratch))
    assert not found, f"{len(found)} of {count} cases disagree with git:\n" + "\n".join(found[:8])


@pytest.mark.reliability("T4", cases=CASES)
def test_discovery_outside_git_keeps_what_git_lists_on_generated_trees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _check(CASES, tmp_path, monkeypatch)


@pytest.mark.slow
@pytest.mark.reliability("T4", cases=SLOW_CASES)
def test_discovery_outside_git_keeps_what_git_lists_on_many_more_generated_trees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    if "slow" not in (request.config.option.markexpr or ""):
        pytest.skip("a scale run: select it with -m slow")
    _check(SLOW_CASES, tmp_path, monkeypatch)


# -- named cases, each against git in a scratch repository of its own ----------------------


def _go_project() -> dict[str, bytes]:
    """A Go module of about a thousand files whose ``.gitignore`` ignores everything, then
    brings back names with a dot, every directory and each Makefile (a real project's)."""
    files = {".gitignore": b"*\n!*.*\n!*/\n!**/Makefile\n", "go.mod": b"module x\n"}
    files |= {"LICENSE": b"license\n", "README.md": b"# x\n", "Makefile": b"all:\n"}
    for p in range(40):
        pkg = f"internal/p{p:02d}/" if p % 2 else f"pkg/p{p:02d}/"
        files[f"{pkg}p{p:02d}"] = b"\x7fELF built binary\n"  # no dot: ignored
        files[f"{pkg}testdata/case.json"] = b"{}\n"
        if p % 4 == 0:
            files[f"{pkg}Makefile"] = b"test:\n"
        for f in range(11):
            files[f"{pkg}f{f:02d}.go"] = f"package p{p}\n".encode()
            files[f"{pkg}f{f:02d}_test.go"] = f"package p{p}\n".encode()
    return files


NAMED = [
    pytest.param(_go_project(), id="go-ignore-all-reinclude-by-negation"),
    pytest.param(
        {".gitignore": b"gen/\n!gen/keep.py\n", "gen/keep.py": b"", "gen/x.py": b"", "a.py": b""},
        id="no-reinclusion-under-an-ignored-directory",
    ),
    pytest.param(
        {
            ".gitignore": b"*.log\n",
            "sub/.gitignore": b"!keep.log\n",
            "sub/keep.log": b"",
            "sub/x.log": b"",
            "keep.log": b"",
        },
        id="nested-file-overrides-its-parent",
    ),
    pytest.param(
        {
            ".gitignore": b"\\#hash\n\\!bang\ntrail\\ \nplain  \n",
            "#hash": b"",
            "!bang": b"",
            "trail ": b"",
            "plain": b"",
            "plain  ": b"",
            "keep": b"",
        },
        id="escapes-and-trailing-spaces",
    ),
    pytest.param(
        {
            ".gitignore": b"[[:digit:]]*.txt\n[!a]*.py\nx[]]y\n",
            "1.txt": b"",
            "a.txt": b"",
            "a.py": b"",
            "b.py": b"",
            "x]y": b"",
        },
        id="character-classes",
    ),
    pytest.param(
        {
            ".gitignore": b"**/tmp\nlogs/**\na/**/b\n/top\n",
            "tmp": b"",
            "x/tmp": b"",
            "logs/x": b"",
            "a/b": b"",
            "a/x/y/b": b"",
            "top": b"",
            "d/top": b"",
        },
        id="double-star-and-anchoring",
    ),
    pytest.param(
        {
            ".gitignore": b"[[:bogus:]]\nsrc/main[![:print:].]go\n[\n",
            "src/main.go": b"",
            "[": b"",
            "a.py": b"",
        },
        id="malformed-brackets-match-nothing",
    ),
    pytest.param(
        {".gitignore": b"\xef\xbb\xbf*.log\r\n!keep.log\r\n", "x.log": b"", "keep.log": b""},
        id="bom-and-crlf",
    ),
    pytest.param(
        {
            ".gitignore": b"".join(b"*x%d*y[a-c]?z\n" % i for i in range(2_000)) + b"!x7*\n",
            **{f"d/x{i}_yb.z": b"" for i in range(0, 2_000, 37)},
            "d/x7": b"",
            "keep": b"",
        },
        id="two-thousand-wildcard-lines",
    ),
]


def _git_list(root: Path, scratch: Path) -> set[str]:
    """What git lists of ``root`` (a copy, made a repository), as the brief for the oracle."""
    copy = scratch / "repo"
    subprocess.run(["cp", "-a", f"{root}/.", str(copy)], check=True, capture_output=True)
    env = _git_env(scratch)
    subprocess.run(["git", "init", "-q"], cwd=copy, env=env, check=True, capture_output=True)
    out = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard", "-z"],
        cwd=copy,
        env=env,
        check=True,
        capture_output=True,
    ).stdout
    return {os.fsdecode(p) for p in out.split(b"\0") if p}


@pytest.mark.parametrize("files", NAMED)
@pytest.mark.reliability("T4")
def test_named_ignore_cases_keep_what_git_lists(tmp_path: Path, files: dict[str, bytes]) -> None:
    root = tmp_path / "tree"
    case = Case(0, files=dict(files))
    _write(root, case)
    kept, excluded = _listed_by_discovery(root.resolve())
    assert excluded == set()
    assert kept == _git_list(root, tmp_path)


def test_the_go_project_keeps_its_whole_source_tree(tmp_path: Path) -> None:
    files = _go_project()
    _write(tmp_path, Case(0, files=files))
    kept, _ = _listed_by_discovery(tmp_path.resolve())
    ignored = {p for p in files if "." not in p.rsplit("/", 1)[-1]} - {"Makefile"}
    ignored = {p for p in ignored if not p.endswith("/Makefile")}
    assert kept == set(files) - ignored
    assert len(kept) == 934  # of 975 files (the walk kept 4 before)


def test_a_gitignore_that_is_a_symlink_is_not_read_as_git_does_not(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    _write(root, Case(0, files={"rules": b"*.py\n", "a.py": b"", "sub/b.py": b""}))
    (root / ".gitignore").symlink_to("rules")
    (root / "sub" / ".gitignore").symlink_to("../rules")
    kept, _ = _listed_by_discovery(root.resolve())
    assert {"a.py", "sub/b.py"} <= kept
    assert kept == _git_list(root, tmp_path)
