"""Request and response models of participation approval and competition settings (docs/API.md; issue 17)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ParticipationStatus = Literal["pending", "approved", "refused"]


class Participation(BaseModel):
    """Where the caller stands in a competition: does it require approval, and what became of their request."""

    competition: str = Field(description="The competition's slug.")
    requires_approval: bool
    status: ParticipationStatus | None = Field(description="The caller's request; null when they have not asked "
                                               "(or need not: approval off, or they manage the competition).")
    may_submit: bool = Field(description="Whether approval lets the caller submit (quota, dates and email "
                             "confirmation still apply).")
    rule: str = Field(description="The competition's participation rule, in a sentence.")


class Participant(BaseModel):
    """One account's request to take part, as the competition's organizers read it."""

    user_id: int
    display_name: str
    email: str = Field(description="Shown to the competition's organizers only, to judge the request.")
    team: str | None
    status: ParticipationStatus
    requested_at: datetime
    decided_at: datetime | None
    decided_by: str | None = Field(description="The organizer who decided, 'operator' for the command line.")


class ParticipantList(BaseModel):
    """A competition's requests to take part, pending first, oldest first."""

    competition: str
    requires_approval: bool
    participants: list[Participant]


class ParticipantsQuery(BaseModel):
    """Query string of GET /competitions/{slug}/participants."""

    model_config = ConfigDict(extra="forbid")

    status: ParticipationStatus | None = Field(default=None, description="Only requests in this state.")


class CompetitionSettings(BaseModel):
    """Body of POST /competitions/{slug}/settings: what to change; a left-out field stays as it is."""

    model_config = ConfigDict(extra="forbid")

    title: str | None = Field(default=None, min_length=1, max_length=200)
    description: str | None = Field(default=None, max_length=20000)
    requires_approval: bool | None = Field(default=None, description="Participants need an organizer's approval "
                                           "before they can submit.")
