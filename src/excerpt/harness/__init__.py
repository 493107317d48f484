"""How a repository is set up and validated, inferred from its files without running anything.

In: a workspace root. Out: a ``Harness`` — ``setup`` and ``validate`` commands, each with the
directory it runs from, its ``file:line`` evidence and a confidence.
"""

from excerpt.harness.infer import infer_harness
from excerpt.harness.model import Command, Harness

__all__ = ["Command", "Harness", "infer_harness"]
