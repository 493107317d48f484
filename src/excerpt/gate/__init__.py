"""The local pre-merge gate (SPEC §8): is a change safe to propose?

In: a git repository and a change (the staged one against a base, or a commit range). Out: a
``GateReport`` of six checks, each PASS/WARN/FAIL with a summary and details. The change is
read from git's objects, never from the work tree; the policy from the base commit, never from
the change. Never runs repository code and never writes inside the repository; never echoes a
secret (a masked preview and a salted fingerprint only).
"""

from __future__ import annotations

from excerpt.gate.policy import Policy
from excerpt.gate.report import CheckResult, GateReport, render_text
from excerpt.gate.run import GateRequest, explain_policy, run_gate

__all__ = [
    "CheckResult",
    "GateReport",
    "GateRequest",
    "Policy",
    "explain_policy",
    "render_text",
    "run_gate",
]
