"""Run the selected suites and decide: every metric at or above its floor, or exit 1."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from excerpt.evals.suites import Packer, SuiteResult, run_accuracy, run_context

__all__ = ["SUITES", "EvalReport", "run_suites"]

SUITES = ("accuracy", "risk", "savings", "context", "gate", "harness")


@dataclass(frozen=True, slots=True)
class EvalReport:
    suites: tuple[SuiteResult, ...]

    @property
    def ok(self) -> bool:
        return all(s.ok for s in self.suites)

    def to_dict(self, *, details: bool = True) -> dict[str, Any]:
        suites = {}
        for suite in self.suites:
            doc = suite.to_dict()
            if not details:
                doc.pop("details", None)
            suites[suite.name] = doc
        return {"pass": self.ok, "suites": suites}


def run_suites(names: Sequence[str], packer: Packer | None = None) -> EvalReport:
    """Run suites by name, in the order of ``SUITES``, with the engine's own packer unless
    another (a test double) is given."""
    from excerpt.evals import suites
    from excerpt.evals.gate_suite import run_gate_suite
    from excerpt.evals.harness_suite import run_harness
    from excerpt.evals.risk_suite import run_risk
    from excerpt.evals.savings import savings_suite  # the tokenizer loads only when needed

    chosen = packer or suites.default_packer

    runners: dict[str, Callable[[Packer], SuiteResult]] = {
        "accuracy": run_accuracy,
        "risk": lambda _packer: run_risk(),  # classifies strings, needs no packer
        "context": run_context,
        "gate": lambda _packer: run_gate_suite(),  # gates fixture changes, needs no packer
        "savings": savings_suite,
        "harness": lambda _packer: run_harness(),  # runs toolchains, needs no packer
    }
    return EvalReport(tuple(runners[name](chosen) for name in SUITES if name in names))
