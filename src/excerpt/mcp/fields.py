"""Argument types shared by the tools: strings that name a file or an excerpt.

A NUL byte names nothing a file system or a handle can hold: such a value is refused when
the arguments are validated, as an ``invalid arguments`` error naming the field, never passed
on to be answered as content.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

__all__ = ["HandleText", "PathText"]


def _no_nul(value: str) -> str:
    if "\0" in value:
        raise ValueError("holds a NUL byte")
    return value


HandleText = Annotated[str, Field(max_length=8192), AfterValidator(_no_nul)]
PathText = Annotated[str, Field(max_length=4096), AfterValidator(_no_nul)]
