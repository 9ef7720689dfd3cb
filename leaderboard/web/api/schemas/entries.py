"""Request and response models of the entries API (docs/ENTRIES.md): teams, final selection, baselines."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from leaderboard.entries import METADATA_KEYS, PROMPTING
from leaderboard.entries.teams import MAX_NAME_LENGTH, MIN_NAME_LENGTH

METADATA_HELP = (f"A JSON object with only these keys: {', '.join(METADATA_KEYS)} (model: text; model_id: a model "
                 f"id such as a Hugging Face repo id, org/name; parameters_b: number ≥ 0, billions; open_weights, "
                 f"uses_retrieval, uses_knowledge_graph: booleans; prompting: {', '.join(PROMPTING)}; url: http or "
                 "https; notes: at most 500 characters). Public once the submission is on the board.")
METHOD_HELP = "The entry's method name, at most 80 characters; 'default' when left out."


class TeamCreate(BaseModel):
    """Body of POST /competitions/{slug}/teams."""

    model_config = ConfigDict(extra="forbid")

    name: Annotated[str, Field(min_length=MIN_NAME_LENGTH, max_length=MAX_NAME_LENGTH)]


class TeamJoin(BaseModel):
    """Body of POST /teams/join."""

    model_config = ConfigDict(extra="forbid")

    invite_code: Annotated[str, Field(min_length=1, max_length=64)]


class TeamMember(BaseModel):
    """A member of a team, by public display name."""

    display_name: str
    joined_at: datetime


class TeamEntry(BaseModel):
    """One of the team's entries in one phase (members and managers only)."""

    phase_id: int
    phase_name: str
    method: str
    submissions: int = Field(description="Uploads accepted for scoring under this method.")
    selected: int = Field(description="How many of them are selected for the final ranking.")
    last_submission_id: int
    last_submitted_at: datetime


class Team(BaseModel):
    """A team of one competition: its members; for its members and managers also the invite code and entries."""

    id: int
    name: str
    competition: str = Field(description="The competition's slug.")
    members: list[TeamMember]
    invite_code: str | None = Field(description="Share it to let someone join; null unless you are a member.")
    entries: list[TeamEntry] | None = Field(description="Null unless you are a member or manage the competition.")
    can_leave: bool = Field(description="Whether you may leave: only before the team's first submission.")
    url: str = Field(description="The team's web page.")


class TeamLeft(BaseModel):
    """The answer to leaving a team."""

    id: int
    left: bool


class Selection(BaseModel):
    """A submission's final-selection state after select or unselect."""

    id: int
    selected: bool
    selected_ids: list[int] = Field(description="Every submission of the entry owner (team or user) now selected "
                                    "in this phase.")
    final_selections: int | None = Field(description="How many may be selected (the phase's setting).")


class BaselineUpload(BaseModel):
    """Multipart form of POST /phases/{id}/baselines."""

    file: bytes = Field(description="The baseline's prediction file, in any accepted format (docs/FORMATS.md).")
    name: Annotated[str, Field(min_length=1, max_length=120)] = Field(description="E.g. 'Human' or 'GPT-4o'.")
    metadata: str | None = Field(default=None, description=METADATA_HELP)


class BaselineCreated(BaseModel):
    """The added baseline: scored like a submission, flagged on the board."""

    id: int
    name: str
    submission_id: int
    metadata: dict[str, Any] | None
    url: str = Field(description="Where to read its submission.")


class EntrySettings(BaseModel):
    """The phase's entry settings (docs/ENTRIES.md)."""

    max_methods: int = Field(description="Methods (entries) per team or user; a new one past it is refused (409).")
    final_selections: int | None = Field(description="Submissions a team may select for the private ranking after "
                                         "close; null: no selection (every submission counts).")
