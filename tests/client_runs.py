"""What the real-client test modules share (``test_real_clients*``, ``test_setup``): the rule
that skips, or under ``CI`` fails, a run this machine cannot make; the record of one client
run against excerpt's tools, with its budget and time limit; and how a line of the shop's
source and a handle look in what a client forwards."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from real_clients import Client, Forwarded, Run, unavailable

RUN_TIMEOUT = 120.0  # seconds per client run; a hang guard, never a performance assertion
BUDGET = 4000
# a line of ``trees.SHOP``'s app/refunds.py: its quotes would be escaped in a JSON copy
DISTINCTIVE = '            raise ValueError("refund larger than the order")\n'
HANDLE = re.compile(r"[\w./-]+#L\d+-L\d+@[0-9a-f]{16}")


@dataclass
class ExcerptRun:
    client: Client
    run: Run
    pack: dict[str, Any]  # the CLI's JSON pack for TASK: the expected top item and handle

    def call(self, index: int) -> Forwarded:
        return self.run.forwarded[index]


def require(client: str, check: Callable[[str], str | None] = unavailable) -> None:
    """Skip (locally) or fail (under CI) when ``check`` says ``client`` cannot run here."""
    reason = check(client)
    if reason is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI is set, and .ci/run installs the clients and runs as root")
    pytest.skip(reason)
