"""Headroom's compaction of payload files, for scripts/compact_savings.py to set beside ours.

Usage: PYTHON scripts/peer_headroom.py KIND:FILE... > results.json

PYTHON is an interpreter with ``headroom-ai`` installed (``pip install 'excerpt[peers]'``, or
any environment that has it); it runs offline, with nothing sent anywhere. For each payload
it prints the view of Headroom's public ``compress()`` (the payload as a tool result in an
Anthropic-format conversation) and of its compressor for that kind called directly
(``DiffCompressor``, ``LogCompressor``, ``SmartCrusher``), as
``{"FILE": {"compress": TEXT, "kind": TEXT}}``. Exits 3 when headroom-ai is not installed.
"""

from __future__ import annotations

import json
import logging
import os
import sys

PROMPT = "Run the command and tell me what it printed."


def main() -> int:
    os.environ.setdefault("HEADROOM_TELEMETRY", "off")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logging.disable(logging.CRITICAL)
    try:
        from headroom import compress  # type: ignore[import-not-found]
        from headroom.transforms.diff_compressor import DiffCompressor  # type: ignore[import-not-found]
        from headroom.transforms.log_compressor import LogCompressor  # type: ignore[import-not-found]
        from headroom.transforms.smart_crusher import SmartCrusher  # type: ignore[import-not-found]
    except ImportError as exc:
        sys.stderr.write(f"headroom-ai is not importable here: {exc}\n")
        return 3
    kinds = {
        "diff": lambda text: DiffCompressor().compress(text).compressed,
        "log": lambda text: LogCompressor().compress(text).compressed,
        "json": lambda text: SmartCrusher().crush(text).compressed,
    }
    out = {}
    for arg in sys.argv[1:]:
        kind, path = arg.split(":", 1)
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", "replace")
        messages = [
            {"role": "user", "content": PROMPT},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "run"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": text}
            ]},
        ]  # fmt: skip
        done = compress(messages, model="claude-sonnet-4-5-20250929")
        result = done.messages[-1]["content"][0]["content"]
        whole = result if isinstance(result, str) else json.dumps(result)
        out[path] = {"compress": whole, "kind": kinds[kind](text)}
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
