"""Who is who and who may do what: access rules, users and tokens, the audit log, confirmation, participation.

``access`` is the one rule for lookups and permissions (Actor, OPERATOR, managed_phase,
phase_status: web, API and CLI ask it the same question); ``users`` registers and
authenticates accounts and keeps API tokens; ``audit`` is the one way into the audit log;
``confirmation`` and ``participation`` are the email and approval steps before a person
may submit. May import notify, models and platform.
"""

from __future__ import annotations

from leaderboard.accounts.access import (
    OPERATOR,
    Actor,
    Operator,
    can_manage,
    ensure_organizer,
    get_competition,
    get_phase,
    get_submission,
    in_team,
    leaderboard_readable,
    managed_competition,
    managed_phase,
    manages_submission,
    phase_status,
    status_at,
    team_of,
)
from leaderboard.accounts.users import (
    MAX_EMAIL_LENGTH,
    SYSTEM_EMAIL,
    authenticate,
    check_email,
    create_token,
    end_sessions,
    get_user_by_email,
    list_tokens,
    register_user,
    revoke_token,
    system_user,
    user_for_token,
)

__all__ = [
    "Actor", "MAX_EMAIL_LENGTH", "OPERATOR", "Operator", "SYSTEM_EMAIL", "authenticate", "can_manage", "check_email",
    "create_token", "end_sessions", "ensure_organizer", "get_competition", "get_phase", "get_submission",
    "get_user_by_email", "in_team", "leaderboard_readable", "list_tokens", "managed_competition", "managed_phase",
    "manages_submission", "phase_status", "register_user", "revoke_token", "status_at", "system_user", "team_of",
    "user_for_token"
]
