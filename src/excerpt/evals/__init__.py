"""Evaluation suites: every quality claim as a command anyone can rerun (SPEC §10).

In: corpora shipped as package data (fixtures, cases, thresholds) and a packer (the real
engine, or a test double). Out: per-suite metrics beside their floors, and a pass/fail the
CLI turns into the exit code. Materialises fixtures only in temporary directories.
"""
