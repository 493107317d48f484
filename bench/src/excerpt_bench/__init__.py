"""excerpt's benchmarks: ``excerpt bench localize``, ``session``, ``perf`` and ``soak``.

How every ranking, delivery and speed claim of excerpt is measured, beside the baselines it
is compared with. A distribution of its own, built only on the product's declared tooling
API (``excerpt.tooling``) and its errors (``excerpt.errors``): the benchmarks judge the
product from outside it. Installed, its commands are mounted under ``excerpt bench``.
"""
