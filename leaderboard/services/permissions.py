"""Who may manage a competition: one rule for the web pages, the API and the CLI.

An organizer manages a competition they created, and any competition nobody
created (``created_by_id`` empty: made from the operator shell). Participants
manage nothing. The operator shell (CLI commands, the demo installer) acts as
``OPERATOR`` and may manage everything; web and API callers always pass the
real user, so a missing user (None, an anonymous caller) is refused, never
mistaken for the operator.
"""

from __future__ import annotations

from leaderboard.models import Competition, User
from leaderboard.runtime import ServiceContext
from leaderboard.services.errors import Forbidden


class Operator:
    """The trusted operator shell: someone with access to the server's CLI."""

    def __repr__(self) -> str:
        return "OPERATOR"


OPERATOR = Operator()
Actor = User | Operator


def is_organizer(actor: Actor | None) -> bool:
    """Return whether actor may organize at all: the operator, or an organizer account."""
    return isinstance(actor, Operator) or (isinstance(actor, User) and actor.is_organizer)


def can_manage(competition: Competition, actor: Actor | None) -> bool:
    """Return whether actor manages this competition (creator, any organizer when it has no creator, operator)."""
    if isinstance(actor, Operator):
        return True
    if not isinstance(actor, User) or not actor.is_organizer:
        return False
    return competition.created_by_id is None or competition.created_by_id == actor.id


def ensure_organizer(actor: Actor | None) -> None:
    """Raise Forbidden unless actor is an organizer or the operator."""
    if not is_organizer(actor):
        raise Forbidden("Only organizers may do this.")


def ensure_can_manage(ctx: ServiceContext, *, competition: Competition, actor: Actor | None) -> None:
    """Raise Forbidden unless actor manages this competition (see can_manage)."""
    ensure_organizer(actor)
    if not can_manage(competition, actor):
        raise Forbidden("Another organizer manages this competition.")
