"""The materialized board of each phase: its state, announced changes, score cells, ranked rows."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, DateTime, Float, ForeignKey, Index, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from leaderboard.platform.db import Base


class Board(Base):
    """Where the materialized board of one phase stands (board/versions.py, docs/RANKING.md).

    ``wanted`` counts the changes writers announced (``ctx.board_changed``: board/changes.py), ``built``
    the announced changes the rows reflect; ``version`` moves whenever the rows change
    and keys every cache of the board; ``signature`` names what the score cells were
    computed under (views, probing settings, splits): a new one recomputes them.
    """

    __tablename__ = "boards"

    phase_id: Mapped[int] = mapped_column(ForeignKey("phases.id", ondelete="CASCADE"), primary_key=True)
    wanted: Mapped[int] = mapped_column(Integer, default=0)
    built: Mapped[int] = mapped_column(Integer, default=0)
    version: Mapped[int] = mapped_column(Integer, default=0)
    signature: Mapped[str] = mapped_column(String(64), default="")
    refreshed_at: Mapped[datetime | None] = mapped_column(DateTime)


class BoardDirty(Base):
    """A change announced to a phase's board and not yet built: a submission, or the whole board (NULL)."""

    __tablename__ = "board_dirty"

    id: Mapped[int] = mapped_column(primary_key=True)
    phase_id: Mapped[int] = mapped_column(ForeignKey("phases.id", ondelete="CASCADE"), index=True)
    submission_id: Mapped[int | None] = mapped_column(Integer)


class ScoreCell(Base):
    """One figure of an active score as the board shows it: a metric path's value and interval on one board.

    ``board`` is "open" (the board while the phase is not closed) or "closed" (after close);
    values are what participants may see there (disclosure.visibility), before the ladder.
    """

    __tablename__ = "score_cells"
    __table_args__ = (Index("ix_score_cells_phase_board_path", "phase_id", "board", "path"),)

    score_id: Mapped[int] = mapped_column(ForeignKey("scores.id", ondelete="CASCADE"), primary_key=True)
    board: Mapped[str] = mapped_column(String(8), primary_key=True)
    path: Mapped[str] = mapped_column(String(300), primary_key=True)
    phase_id: Mapped[int] = mapped_column(ForeignKey("phases.id", ondelete="CASCADE"))
    value: Mapped[float | None] = mapped_column(Float)
    lo: Mapped[float | None] = mapped_column(Float)
    hi: Mapped[float | None] = mapped_column(Float)
    error: Mapped[float | None] = mapped_column(Float)  # a coarse figure's step (docs/PROBING.md); None: exact


class BoardRow(Base):
    """One ranked row of a phase's board: an entry's best submission in one view, on one board (docs/RANKING.md).

    An entry is (team, or user without a team; method); a baseline is an entry of its own.
    ``position`` is the row's place in the view's order (baselines included), ``rank`` its
    ordinal among ranked rows; the row's other columns are its score's cells.
    """

    __tablename__ = "board_rows"
    __table_args__ = (
        UniqueConstraint("phase_id", "board", "view", "entry"),
        Index("ix_board_rows_phase_board_view_position", "phase_id", "board", "view", "position"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    phase_id: Mapped[int] = mapped_column(ForeignKey("phases.id", ondelete="CASCADE"))
    board: Mapped[str] = mapped_column(String(8))
    view: Mapped[int] = mapped_column(Integer)
    position: Mapped[int] = mapped_column(Integer)
    entry: Mapped[str] = mapped_column(String(120))
    submission_id: Mapped[int] = mapped_column(Integer)
    score_id: Mapped[int] = mapped_column(Integer)
    user_id: Mapped[int | None] = mapped_column(Integer)  # the uploader, for a user without a team
    team_id: Mapped[int | None] = mapped_column(Integer)
    display_name: Mapped[str] = mapped_column(String(120))
    team: Mapped[str | None] = mapped_column(String(80))
    method: Mapped[str] = mapped_column(String(80))
    entry_metadata: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    is_baseline: Mapped[bool] = mapped_column(Boolean)
    builtin: Mapped[bool] = mapped_column(Boolean)
    submitted_at: Mapped[datetime] = mapped_column(DateTime)
    submissions: Mapped[int] = mapped_column(Integer)  # scored submissions of the entry on this board
    rank: Mapped[int | None] = mapped_column(Integer)
    stat_rank: Mapped[int | None] = mapped_column(Integer)
    p_vs_previous: Mapped[float | None] = mapped_column(Float)
    value: Mapped[float | None] = mapped_column(Float)
    ci_lo: Mapped[float | None] = mapped_column(Float)
    ci_hi: Mapped[float | None] = mapped_column(Float)
    ladder_step: Mapped[float | None] = mapped_column(Float)  # figures rounded to this step (the ladder)
    withheld: Mapped[bool] = mapped_column(Boolean, default=False)  # under the ladder, nothing released yet
