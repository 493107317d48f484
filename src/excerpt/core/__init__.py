"""Shared building blocks: hashing, safe git, settings and limits.

In: bytes, paths, argv. Out: digests, git output, resolved settings. Never writes inside a
repository; ``git`` is the only module here that starts a process.
"""
