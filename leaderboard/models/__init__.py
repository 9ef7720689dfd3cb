"""SQLAlchemy 2 models of Tailboard, one module per feature; this front door re-exports every model.

``accounts`` (User, ApiToken), ``competitions`` (Competition, Participation, Phase,
LabelVersion, Team, TeamMember), ``submissions`` (Submission, Score, Baseline, QuotaUsage),
``board`` (Board, BoardDirty, ScoreCell, BoardRow), ``operations`` (Job, AuditEntry,
MailOutbox) and ``notify`` (NotifyPreference, Webhook, WebhookDelivery). Importing this
package registers every table on ``Base.metadata`` (alembic's env.py relies on it), and
relationship strings name any model. Models import only leaderboard.platform's db module.
"""

from leaderboard.models.accounts import ApiToken, User
from leaderboard.models.board import Board, BoardDirty, BoardRow, ScoreCell
from leaderboard.models.competitions import Competition, LabelVersion, Participation, Phase, Team, TeamMember
from leaderboard.models.notify import NotifyPreference, Webhook, WebhookDelivery
from leaderboard.models.operations import AuditEntry, Job, MailOutbox
from leaderboard.models.submissions import Baseline, QuotaUsage, Score, Submission

__all__ = [
    "ApiToken", "AuditEntry", "Baseline", "Board", "BoardDirty", "BoardRow", "Competition", "Job", "LabelVersion",
    "MailOutbox", "NotifyPreference", "Participation", "Phase", "QuotaUsage", "Score", "ScoreCell", "Submission",
    "Team", "TeamMember", "User", "Webhook", "WebhookDelivery",
]
