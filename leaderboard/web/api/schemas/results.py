"""A phase's board exported for other tools (docs/MOVING.md#result-exports): the query and the document."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from leaderboard.web.api.schemas.common import Omitted, drop_null_defaults
from scoring.exports import FORMATS


class ResultsQuery(BaseModel):
    """Query string of GET /phases/{id}/results."""

    model_config = ConfigDict(json_schema_extra=lambda schema: drop_null_defaults(schema))

    format: Annotated[str, Field(max_length=40, json_schema_extra={"enum": list(FORMATS)})] = Field(
        description="every-eval-ever (Every Eval Ever 0.3.0 aggregate records) or hf-eval-results (the model-index "
                    "of a Hugging Face model card); any other value is a 400 listing these.")
    view: Omitted[Annotated[str, Field(max_length=60)]] = Field(
        default=None, description="A view's name (the first view when left out): its metric is the ranked one.")
    baselines: bool = Field(default=False, description="Also export the baselines (unranked).")


class ResultExport(BaseModel):
    """One phase's board as shown to participants, in an export format; a coarse figure is never exported as exact."""

    model_config = ConfigDict(json_schema_extra=lambda schema: drop_null_defaults(schema))

    format: Literal["every-eval-ever", "hf-eval-results"]
    schema_version: Omitted[str] = Field(default=None, description="Every Eval Ever's schema version (0.3.0).")
    phase_id: int
    split: Literal["public", "private"] | None = Field(
        description="The split the board shows: public while a phase with a private split is open, private once "
                    "it is closed; null for a phase without splits.")
    phase_status: Literal["open", "closed"] = Field(
        description="open: the public split's ranked figures are exact, the others coarse as the board shows "
                    "them (marked in Every Eval Ever, left out of Hugging Face records); closed: the private "
                    "split's ranked figures are exact, the others as coarse as the board shows them.")
    ranking_metric: str
    retrieved_at: datetime
    records: list[dict[str, Any]] = Field(description="One record per ranked entry, in board order.")
