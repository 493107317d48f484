"""A hook run as its client runs it: a process with the client's JSON on stdin, and what it
answers; and the small shop the hook tests seed from (``FILES``), with the task they prompt.
Shared by ``test_hooks`` and ``test_hooks_warm``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REFUNDS = (
    "class RefundWebhook:\n"
    '    """Deliver refund events to the merchant\'s webhook."""\n'
    "\n"
    "    def retry_delivery(self, event, attempts):\n"
    "        for attempt in range(attempts):\n"
    "            if self.send(event):\n"
    "                return attempt\n"
    "        raise WebhookGaveUp(event)\n"
    "\n"
    "    def send(self, event):\n"
    "        return self.transport.post(event.url, event.body)\n"
)
FILES = {
    "shop/refunds.py": REFUNDS,
    "shop/orders.py": "def order_total(order):\n    return sum(i.price for i in order.items)\n",
    "shop/invoices.py": "def render_invoice(order):\n    return f'invoice {order.id}'\n",
    "tests/test_refunds.py": "from shop.refunds import RefundWebhook\n\n"
    "def test_retry_delivery():\n    assert RefundWebhook\n",
    "README.md": "# Shop\n\nRefunds, orders and invoices.\n",
}
TASK = "RefundWebhook.retry_delivery gives up after the first failed webhook delivery"


def hook(
    event: str,
    payload: dict[str, Any] | bytes,
    *args: str,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return subprocess.run(
        [sys.executable, "-m", "excerpt", "hook", event, *args],
        input=data, capture_output=True, timeout=120, check=False,
        env={**os.environ, **(env or {})},
    )  # fmt: skip


def context_of(proc: subprocess.CompletedProcess[bytes], event: str) -> str:
    assert proc.returncode == 0, proc.stderr
    if not proc.stdout:
        return ""
    doc = json.loads(proc.stdout)
    assert doc["hookSpecificOutput"]["hookEventName"] == event
    return str(doc["hookSpecificOutput"]["additionalContext"])


def prompt(repo: Path, text: str, session: str = "s1") -> dict[str, Any]:
    return {"session_id": session, "cwd": str(repo), "hook_event_name": "UserPromptSubmit",
            "prompt": text}  # fmt: skip
