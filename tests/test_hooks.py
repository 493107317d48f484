"""``excerpt hook``: the seed at a task prompt, compaction in flight, the handles after a
compaction, and a hook that never breaks its client. Each hook runs as the client runs it: a
process with the client's JSON on stdin."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import tree_snapshot
from excerpt.core.tokens import o200k_count
from excerpt.hooks.prompt import classify_prompt, same_task
from hook_runs import FILES, REFUNDS, TASK, context_of, hook, prompt


def seeded_eventually(repo: Path, session: str) -> str:
    """The seed a task prompt gets once the background index a hook started has ended."""
    seeded = ""
    for _ in range(300):
        seeded = context_of(hook("UserPromptSubmit", prompt(repo, TASK, session)),
                            "UserPromptSubmit")  # fmt: skip
        if "being indexed" not in seeded:
            break
        time.sleep(0.2)
    return seeded


def handles_in(text: str) -> set[str]:
    return {w.strip("`") for w in text.split() if "#L" in w and "@" in w}


@pytest.fixture
def shop(make_repo: Callable[..., Path], cache_dir: Path) -> Path:
    repo = make_repo(FILES)
    subprocess.run([sys.executable, "-m", "excerpt", "index", "--repo", str(repo)], check=True,
                   capture_output=True)  # fmt: skip
    return repo


# -- what reads as a task -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "task"),
    [
        ("yes", False),
        ("go on", False),
        ("run the tests", False),
        ("ok, commit it and push", False),
        ("/compact", False),
        ("!ls -la", False),
        ("", False),
        ("thanks, looks good", False),
        (TASK, True),
        ("fix the refund webhook retry when the transport times out", True),
        ("see shop/refunds.py", True),
        ("fix the bug in munlock", True),
        ("yes, fix it", False),
        ('File "shop/refunds.py", line 8, in retry_delivery', True),
    ],
    ids=lambda v: str(v)[:30],
)
def test_a_prompt_is_seeded_only_when_it_reads_as_a_task(text: str, task: bool) -> None:
    assert classify_prompt(text).task is task


def test_a_prompt_mostly_of_the_seeded_tasks_terms_is_the_same_task() -> None:
    seeded = classify_prompt(TASK).terms
    assert same_task(classify_prompt("retry_delivery of the refund webhook gives up").terms,
                     seeded)  # fmt: skip
    assert not same_task(classify_prompt("render_invoice shows the wrong order id").terms,
                         seeded)  # fmt: skip


# -- the seed -------------------------------------------------------------------------------


def test_a_task_prompt_gets_a_seed_of_exact_source_with_handles_that_get_serves(
    shop: Path,
) -> None:
    text = context_of(hook("UserPromptSubmit", prompt(shop, TASK)), "UserPromptSubmit")
    assert "    def retry_delivery(self, event, attempts):\n" in text
    assert o200k_count(text) <= 2000
    handles = [w.strip("`") for w in text.split() if "#L" in w and "@" in w]
    assert handles
    got = subprocess.run([sys.executable, "-m", "excerpt", "get", "--repo", str(shop), "--json",
                          *handles], capture_output=True, check=False)  # fmt: skip
    assert got.returncode == 0, got.stderr
    assert all(r["status"] == "fresh" for r in json.loads(got.stdout))


def test_the_seed_stays_within_its_token_cap(shop: Path) -> None:
    text = context_of(hook("UserPromptSubmit", prompt(shop, TASK), "--seed-tokens", "300"),
                      "UserPromptSubmit")  # fmt: skip
    assert text and o200k_count(text) <= 300


def test_a_follow_up_and_the_same_task_again_get_no_second_seed(shop: Path) -> None:
    assert context_of(hook("UserPromptSubmit", prompt(shop, TASK)), "UserPromptSubmit")
    assert not hook("UserPromptSubmit", prompt(shop, "yes, go on")).stdout
    assert not hook("UserPromptSubmit", prompt(shop, TASK)).stdout
    # another session is seeded on its own
    assert hook("UserPromptSubmit", prompt(shop, TASK, session="s2")).stdout


def test_a_new_task_in_the_session_never_serves_the_same_regions_again(shop: Path) -> None:
    first = context_of(hook("UserPromptSubmit", prompt(shop, TASK)), "UserPromptSubmit")
    second = context_of(
        hook("UserPromptSubmit", prompt(shop, "the webhook transport post sends the refund "
                                              "event body to the wrong url")),
        "UserPromptSubmit",
    )  # fmt: skip
    assert handles_in(first) and not (handles_in(first) & handles_in(second))


def test_the_map_shape_names_regions_by_handle_without_source(shop: Path) -> None:
    text = context_of(hook("UserPromptSubmit", prompt(shop, TASK), "--seed-shape", "map"),
                      "UserPromptSubmit")  # fmt: skip
    assert "shop/refunds.py#L" in text
    assert "raise WebhookGaveUp(event)" not in text


def test_a_prompt_outside_the_served_repository_gets_nothing(shop: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert not hook("UserPromptSubmit", prompt(elsewhere, TASK), "--repo", str(shop)).stdout


def test_the_seed_never_writes_inside_the_repository(shop: Path) -> None:
    before = tree_snapshot(shop)
    assert hook("UserPromptSubmit", prompt(shop, TASK)).stdout
    assert tree_snapshot(shop) == before


# -- never breaking the client --------------------------------------------------------------


@pytest.mark.parametrize(
    "payload",
    [b"", b"not json", b"[1, 2]", b"\x00\xff\xfe" * 1000, b'{"prompt": 12}',
     json.dumps({"prompt": TASK, "cwd": "/nonexistent/dir"}).encode()],
    ids=["empty", "not-json", "array", "binary", "prompt-not-text", "missing-cwd"],
)  # fmt: skip
def test_bad_input_is_exit_0_with_nothing_injected(shop: Path, payload: bytes) -> None:
    for event in ("UserPromptSubmit", "PostToolUse", "SessionStart"):
        proc = hook(event, payload)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")


def test_a_bad_hook_command_line_is_exit_0_and_a_log_line(shop: Path, cache_dir: Path) -> None:
    proc = hook("NoSuchEvent", prompt(shop, TASK))
    assert (proc.returncode, proc.stdout) == (0, b"")
    assert "bad hook command line" in (cache_dir / "hooks.log").read_text(encoding="utf-8")


def test_without_an_index_the_prompt_gets_a_note_and_the_index_is_built_for_the_next(
    make_repo: Callable[..., Path], cache_dir: Path
) -> None:
    repo = make_repo(FILES, name="fresh")
    text = context_of(hook("UserPromptSubmit", prompt(repo, TASK)), "UserPromptSubmit")
    assert "is being indexed" in text and "def " not in text
    assert "def retry_delivery" in seeded_eventually(repo, "s9")


def test_a_seed_over_the_timeout_is_a_one_line_note(shop: Path) -> None:
    text = context_of(hook("UserPromptSubmit", prompt(shop, TASK), "--timeout", "0"),
                      "UserPromptSubmit")  # fmt: skip
    assert text.count("\n") == 0 and "no context seed" in text
    # nothing was recorded as sent: once the refresh started for it ends, the task is seeded
    assert "def retry_delivery" in seeded_eventually(shop, "s1")


def test_a_probe_is_answered_with_the_version(shop: Path) -> None:
    proc = hook("PostToolUse", b'{"excerpt_probe": true}')
    assert json.loads(proc.stdout)["excerpt_probe"] == "ok"


# -- compaction in flight -------------------------------------------------------------------

LOG = "".join(f"2026-12-04T10:00:{i % 60:02d} INFO worker 3 processed batch {i} ok\n"
              for i in range(600))  # fmt: skip
ERROR = "2026-12-04T10:10:00 ERROR worker 3 failed: ConnectionResetError in send()\n"


def bash(command: str, stdout: str, stderr: str = "") -> dict[str, Any]:
    return {
        "session_id": "s1", "cwd": "/", "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_response": {"stdout": stdout, "stderr": stderr, "interrupted": False,
                          "isImage": False, "noOutputExpected": False},
    }  # fmt: skip


def test_a_large_bash_output_is_replaced_by_its_compacted_view_that_expands_back(
    cache_dir: Path,
) -> None:
    original = LOG[: len(LOG) // 2] + ERROR + LOG[len(LOG) // 2 :]
    proc = hook("PostToolUse", bash("./run-worker", original))
    out = json.loads(proc.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "PostToolUse"
    updated = out["updatedToolOutput"]
    assert set(updated) == {"stdout", "stderr", "interrupted", "isImage", "noOutputExpected"}
    assert ERROR in updated["stdout"]
    assert len(updated["stdout"]) < len(original) * 0.9
    ident = updated["stdout"].split(" expand ", 1)[1].split("`", 1)[0]
    back = subprocess.run([sys.executable, "-m", "excerpt", "expand", ident],
                          capture_output=True, check=True)  # fmt: skip
    assert back.stdout == original.encode()


def test_an_output_claude_code_cut_to_30000_bytes_is_said_to_be_cut(cache_dir: Path) -> None:
    # Claude Code gives its hooks a long Bash output's first 30,000 bytes only
    cut = (ERROR + LOG * 2).encode()[:30_000].decode()
    out = json.loads(hook("PostToolUse", bash("make", cut)).stdout)["hookSpecificOutput"]
    head = out["updatedToolOutput"]["stdout"].split("\n", 1)[0]
    assert "returns these 30,000 bytes" in head and "first 30,000 bytes" in head
    assert "returns all of it" not in head
    shorter = cut[:-1]
    out = json.loads(hook("PostToolUse", bash("make", shorter)).stdout)["hookSpecificOutput"]
    assert "returns all of it byte for byte" in out["updatedToolOutput"]["stdout"].split("\n")[0]


@pytest.mark.parametrize(
    ("tool", "command"),
    [("Bash", "excerpt expand 0123456789abcdef"), ("Bash", "~/.venv/bin/excerpt get a.py#L1-L2@00"),
     ("mcp__excerpt__context_retrieve", None)],
    ids=["expand", "get", "own-mcp-tool"],
)  # fmt: skip
def test_excerpts_own_retrievals_are_never_compacted(
    cache_dir: Path, tool: str, command: str | None
) -> None:
    payload = bash(command or "", LOG)
    payload["tool_name"] = tool
    if tool.startswith("mcp__"):
        payload["tool_response"] = [{"type": "text", "text": LOG}]
    assert hook("PostToolUse", payload).stdout == b""


def test_a_small_output_and_codex_are_left_alone(cache_dir: Path) -> None:
    assert hook("PostToolUse", bash("ls", "a\nb\n")).stdout == b""
    assert hook("PostToolUse", bash("cat log", LOG), "--client", "codex").stdout == b""


def test_an_mcp_tools_large_text_output_is_compacted_in_its_own_shape(cache_dir: Path) -> None:
    payload = bash("", "")
    payload["tool_name"] = "mcp__logs__tail"
    payload["tool_response"] = [{"type": "text", "text": LOG + ERROR}]
    updated = json.loads(hook("PostToolUse", payload).stdout)["hookSpecificOutput"][
        "updatedToolOutput"
    ]
    assert updated[0]["type"] == "text" and ERROR in updated[0]["text"]
    assert len(updated[0]["text"]) < len(LOG) * 0.9


# -- after a compaction ---------------------------------------------------------------------


def test_after_a_compaction_the_fresh_handles_of_the_sessions_seeds_are_listed(
    shop: Path,
) -> None:
    context_of(hook("UserPromptSubmit", prompt(shop, TASK)), "UserPromptSubmit")
    start = {"session_id": "s1", "cwd": str(shop), "hook_event_name": "SessionStart",
             "source": "compact"}  # fmt: skip
    text = context_of(hook("SessionStart", start), "SessionStart")
    assert "shop/refunds.py#L" in text
    assert hook("SessionStart", {**start, "source": "startup"}).stdout == b""
    # a file edited since: its handles are no longer listed
    (shop / "shop/refunds.py").write_text(REFUNDS + "# edited\n", encoding="utf-8")
    assert "shop/refunds.py#L" not in context_of(hook("SessionStart", start), "SessionStart")


# -- each client's own limit on a context text ------------------------------------------------


@pytest.mark.parametrize(("client", "chars", "tokens"), [("claude", 9_800, None),
                                                         ("codex", None, 2_400)])  # fmt: skip
def test_a_seed_stays_under_the_clients_own_context_limit(
    make_repo: Callable[..., Path], cache_dir: Path, client: str, chars: int | None,
    tokens: int | None,
) -> None:  # fmt: skip
    big = {f"shop/refunds_{n}.py": REFUNDS.replace("RefundWebhook", f"RefundWebhook{n}") * 8
           for n in range(12)}  # fmt: skip
    repo = make_repo({**FILES, **big}, name="big")
    subprocess.run([sys.executable, "-m", "excerpt", "index", "--repo", str(repo)], check=True,
                   capture_output=True)  # fmt: skip
    text = context_of(
        hook("UserPromptSubmit", prompt(repo, TASK + " in every refunds module"), "--client",
             client, "--seed-tokens", "8000", "--seed-shape", "pack"),
        "UserPromptSubmit",
    )  # fmt: skip
    assert "retry_delivery" in text
    if chars is not None:
        assert len(text) <= chars
    if tokens is not None:
        assert o200k_count(text) <= tokens


# -- hostile prompts ------------------------------------------------------------------------

SECRET = "AKIAZ3MHQXBV7PLKD4TR"


def test_a_seed_never_holds_a_sensitive_file_or_a_secret_line(
    make_repo: Callable[..., Path], cache_dir: Path
) -> None:
    files = {
        **FILES,
        ".env": "WEBHOOK_SIGNING_KEY=whsec_live_9f8e7d6c5b4a39281706f5e4d3c2b1a0\n",
        "shop/settings.py": "WEBHOOK_TIMEOUT = 10\n"
        f'AWS_ACCESS_KEY_ID = "{SECRET}"\n'
        "WEBHOOK_RETRIES = 3\n",
    }
    repo = make_repo(files, name="secrets")
    subprocess.run([sys.executable, "-m", "excerpt", "index", "--repo", str(repo)], check=True,
                   capture_output=True)  # fmt: skip
    task = ("the webhook signing key from .env and AWS_ACCESS_KEY_ID in shop/settings.py are"
            " not used by RefundWebhook retry_delivery")  # fmt: skip
    text = context_of(hook("UserPromptSubmit", prompt(repo, task)), "UserPromptSubmit")
    assert text and "whsec_live" not in text and SECRET not in text


@pytest.mark.parametrize(
    "text",
    [
        TASK + " " + "refund " * 400_000,  # about 2.8 MB
        TASK + "\x00\x01\x1b[31m\u202e\u200b" * 50,
        "\ud800 lone surrogate " + TASK,
    ],
    ids=["huge", "controls", "surrogate"],
)
def test_a_hostile_prompt_is_answered_within_the_limits_or_not_at_all(
    shop: Path, text: str
) -> None:
    data = json.dumps(prompt(shop, text)).encode()
    proc = hook("UserPromptSubmit", data, "--timeout", "30")
    seed = context_of(proc, "UserPromptSubmit")
    assert proc.stderr == b""
    if seed:
        assert o200k_count(seed) <= 2000 and "\x1b[31m" not in seed


def test_concurrent_sessions_on_one_repository_are_each_seeded(shop: Path) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "excerpt", "hook", "UserPromptSubmit", "--timeout", "60"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(6)
    ]
    outs = [
        proc.communicate(json.dumps(prompt(shop, TASK, session=f"c{n}")).encode(), timeout=120)
        for n, proc in enumerate(procs)
    ]
    assert all(p.returncode == 0 for p in procs)
    assert all(b"def retry_delivery" in out for out, _ in outs)


def test_a_maps_regions_are_never_named_again_but_their_source_may_still_be_served(
    shop: Path,
) -> None:
    first = context_of(hook("UserPromptSubmit", prompt(shop, TASK), "--seed-shape", "map"),
                       "UserPromptSubmit")  # fmt: skip
    other = "the refund webhook send posts the event body through the transport"
    again = context_of(hook("UserPromptSubmit", prompt(shop, other), "--seed-shape", "map"),
                       "UserPromptSubmit")  # fmt: skip
    assert handles_in(first) and not (handles_in(first) & handles_in(again))
    third = "WebhookGaveUp is raised by retry_delivery when every attempt to send fails"
    served = context_of(hook("UserPromptSubmit", prompt(shop, third), "--seed-shape", "pack"),
                        "UserPromptSubmit")  # fmt: skip
    assert "raise WebhookGaveUp(event)" in served  # a map named it; its source was not sent
