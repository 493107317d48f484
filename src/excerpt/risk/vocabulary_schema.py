"""The schema of ``concepts.json`` (pydantic, strict): every key known, every token one token.

Only a document that is not the packaged one as shipped is checked here at run time
(``excerpt.risk.vocabulary`` pins the packaged file by digest); pydantic is slow to import.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)

from excerpt.errors import EnvironmentFault
from excerpt.index.tokens import fold, split_identifier

__all__ = ["check_vocabulary"]

_STRICT = ConfigDict(strict=True, extra="forbid", frozen=True)


def _one_token(value: str) -> str:
    if fold(value) not in split_identifier(value):
        raise ValueError(f"{value!r} is not a single token (see excerpt.index.tokens)")
    return value


Token = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]+$"), AfterValidator(_one_token)]
Phrase = Annotated[list[Token], Field(min_length=2)]
MaskPhrase = Annotated[list[Token], Field(min_length=1)]
Component = Annotated[str, StringConstraints(pattern=r"^[^/\s]+$")]
DirRun = Annotated[list[Component], Field(min_length=1)]


class _Words(BaseModel):
    model_config = _STRICT
    tokens: list[Token] = []
    sequences: list[Phrase] = []
    mask: list[MaskPhrase] = []


class _Exclude(BaseModel):
    model_config = _STRICT
    basenames: list[Component] = []
    dirs: list[DirRun] = []


class _PathRules(_Words):
    basenames: list[Component] = []
    dirs: list[DirRun] = []
    sensitive: bool = False
    exclude: _Exclude = _Exclude()


class _Concept(_Words):
    name: str = Field(min_length=1)
    description: str = Field(min_length=1)
    gate_risk: bool
    path: _PathRules = _PathRules()
    query: _Words = _Words()


class _Vocabulary(BaseModel):
    model_config = _STRICT
    version: Literal[1]
    description: str
    concepts: list[_Concept] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_names(self) -> _Vocabulary:
        names = [c.name for c in self.concepts]
        if len(set(names)) != len(names):
            raise ValueError("concept names must be unique")
        return self


def check_vocabulary(text: str) -> None:
    """Check a vocabulary document against the schema.

    Raises:
        EnvironmentFault: the document is not JSON or breaks the schema (names the places).
    """
    try:
        _Vocabulary.model_validate_json(text)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(p) for p in e['loc']) or 'document'}: {e['msg']}"
            for e in exc.errors()[:3]
        ]
        raise EnvironmentFault(f"risk vocabulary is malformed: {'; '.join(problems)}") from None
