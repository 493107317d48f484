"""What a real MCP client (Claude Code or Codex) forwards to its model from one excerpt tool call.

Runs the pinned client (``.ci/run`` installs it under ``.ci/node/clients``) against a local
model stub, in a network namespace with only loopback, with excerpt's MCP server on
``--repo``; prints the tool result exactly as the client forwarded it (its framing removed,
e.g. Codex's ``Wall time: … Output:``) and a one-line summary on stderr.

    python scripts/client_roundtrip.py --client claude --repo DIR --tool context_pack \\
        --args '{"task": "…", "budget": 8000}' [--out FILE] [--timeout 300]

``--out`` writes a JSON record: the forwarded text and item, the client's framing, the
server's own result, the clientInfo, the model request that carried the result, and timings.
Exit status: 0 forwarded, 1 the client forwarded nothing, 2 the client cannot run here.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from real_clients import (
    CLIENTS,
    CODEX_MODEL,
    ClientRunError,
    ToolCall,
    forwarded_tool_results,
    unavailable,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--client", choices=CLIENTS, required=True)
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--tool", default="context_pack", help="an excerpt MCP tool")
    parser.add_argument("--args", default="{}", help="the tool's arguments, a JSON object")
    parser.add_argument("--out", type=Path, help="write the full record here (JSON)")
    parser.add_argument(
        "--timeout", type=float, default=300.0, help="seconds for the whole client run"
    )
    parser.add_argument(
        "--cache", type=Path, help="excerpt cache directory (default: a new one, cold index)"
    )
    parser.add_argument("--workdir", type=Path, help="keep the run's records here")
    parser.add_argument(
        "--codex-model",
        default=CODEX_MODEL,
        help=f"Codex's model (default {CODEX_MODEL}; a code-mode one such as gpt-6.2-sol makes "
        "the call from JavaScript through exec)",
    )
    ns = parser.parse_args(argv)
    arguments = json.loads(ns.args)
    if not isinstance(arguments, dict):
        parser.error("--args must be a JSON object")
    reason = unavailable(ns.client)
    if reason is not None:
        print(f"cannot run {ns.client}: {reason}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="excerpt-roundtrip-") as tmp:
        cache = ns.cache or Path(tmp) / "cache"
        started = time.monotonic()
        try:
            run = forwarded_tool_results(
                ns.client,
                ns.repo.resolve(),
                cache,
                [ToolCall(ns.tool, arguments)],
                timeout=ns.timeout,
                workdir=ns.workdir,
                codex_model=ns.codex_model,
            )
        except ClientRunError as exc:
            print(str(exc), file=sys.stderr)
            return 1
        seconds = time.monotonic() - started
    forwarded = run.forwarded[0]
    markers = forwarded.truncation_markers()
    sys.stdout.write(forwarded.text)
    if not forwarded.text.endswith("\n"):
        sys.stdout.write("\n")
    sys.stdout.flush()
    info = forwarded.client_info
    print(
        f"{ns.client} {run.version}: {ns.tool} forwarded {forwarded.size:,} bytes"
        f" ({len(forwarded.framed.encode()):,} with the client's framing);"
        f" truncation marker: {', '.join(repr(m) for m in markers) if markers else 'none'};"
        f" clientInfo {info.get('name')}/{info.get('version')}; run {seconds:.1f} s",
        file=sys.stderr,
    )
    if ns.out is not None:
        record = {
            "client": ns.client,
            "version": run.version,
            "tool": ns.tool,
            "arguments": arguments,
            "bytes": forwarded.size,
            "framed_bytes": len(forwarded.framed.encode()),
            "truncation_markers": markers,
            "seconds": seconds,
            "client_info": info,
            "framing": forwarded.framing,
            "text": forwarded.text,
            "raw": forwarded.raw,
            "server_result": forwarded.server_result,
            "request": forwarded.request,
        }
        ns.out.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
