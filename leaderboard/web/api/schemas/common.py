"""What every API answer shares: the error object, a rejected file's problems, form-field types."""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar, Union

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from leaderboard.organizing import LIMIT_MIN

T = TypeVar("T")
# A form field that may be left out: None in Python, but never a null on the wire (forms have no null).
Omitted = Union[T, SkipJsonSchema[None]]  # noqa: UP007 (mypy takes a generic alias over T only from Union)
Count = Annotated[int, Field(ge=LIMIT_MIN)]

PhaseStatus = Literal["upcoming", "open", "closed"]
PublicFeedback = Literal["exact", "ladder"]
SliceItems = Annotated[int, Field(ge=1)]
Positive = Annotated[int, Field(ge=1, le=1000)]
LadderStep = Annotated[float, Field(gt=0, le=1)]
SubmissionStatus = Literal["received", "queued", "scoring", "scored", "failed"]



class Error(BaseModel):
    """Every error response: a sentence for people and machine-readable details."""

    error: str = Field(description="What went wrong, in a sentence a person can act on.")
    details: Any = Field(default=None, description="Validation problems, the quota reset time, or null.")


class Problem(BaseModel):
    """One problem of a rejected prediction file (docs/FORMATS.md#prediction-files)."""

    line: int | None = Field(description="1-based line number; null for problems of the whole file.")
    id: str | None = Field(default=None, description="The item id, when known.")
    message: str


class ValidationErrors(BaseModel):
    """The errors object of a rejected prediction file: at most 50 problems and their total."""

    errors: list[Problem]
    error_count: int


def drop_null_defaults(schema: dict[str, Any]) -> None:
    for prop in schema.get("properties", {}).values():
        if "default" in prop and prop["default"] is None:
            del prop["default"]


class OpenApiDocument(BaseModel):
    """The OpenAPI 3.1 document of this API."""

    model_config = ConfigDict(extra="allow")

    openapi: str
    info: dict[str, Any]
    paths: dict[str, Any]
