"""The wired parts of one instance (engine, storage, dispatcher) and a per-call context.

Built once by the app factory or the Celery worker; services receive a
``ServiceContext`` (a session plus the runtime) and never import Flask.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

from leaderboard.config import Settings
from leaderboard.db import make_engine, make_sessionmaker
from leaderboard.storage.base import Storage

if TYPE_CHECKING:
    from leaderboard.services.dispatch import Dispatcher


@dataclass
class Runtime:
    """Long-lived parts shared by every request or task of one process."""

    settings: Settings
    engine: Engine
    sessions: sessionmaker[Session]
    storage: Storage  # uploads and public data files
    labels: Storage  # hidden labels: never routed, never served
    dispatcher: "Dispatcher | None" = None
    caches: dict[str, object] = field(default_factory=dict)

    def context(self, session: Session) -> "ServiceContext":
        """Return a service context bound to session."""
        return ServiceContext(session=session, runtime=self)


@dataclass
class ServiceContext:
    """What a service call needs: the unit-of-work session and the runtime."""

    session: Session
    runtime: Runtime

    @property
    def settings(self) -> Settings:
        """Return the instance settings."""
        return self.runtime.settings

    @property
    def storage(self) -> Storage:
        """Return the storage of uploads and public files."""
        return self.runtime.storage

    @property
    def labels(self) -> Storage:
        """Return the storage of hidden labels."""
        return self.runtime.labels


def build_runtime(settings: Settings) -> Runtime:
    """Create the engine, storages and dispatcher named by settings."""
    from leaderboard.services.dispatch import make_dispatcher
    from leaderboard.storage import make_storages

    engine = make_engine(settings.database_url)
    storage, labels = make_storages(settings)
    runtime = Runtime(settings=settings, engine=engine, sessions=make_sessionmaker(engine), storage=storage, labels=labels)
    runtime.dispatcher = make_dispatcher(runtime)
    return runtime
