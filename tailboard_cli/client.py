"""A thin requests wrapper over the Tailboard API that turns failures into typed errors."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

from tailboard_cli import __version__
from tailboard_cli.upload import multipart_body

TIMEOUT = (10, 120)  # connect, read (seconds)
UPLOAD_TIMEOUT = (10, 600)


@dataclass
class ApiError(Exception):
    """The server answered with an error status and its {"error", "details"} body."""

    status: int
    message: str
    details: Any = None
    retry_after: str | None = None

    def __str__(self) -> str:
        return self.message


class NetworkError(Exception):
    """The server could not be reached or the connection broke."""


class Client:
    """Calls of the Tailboard API at base_url with one token."""

    def __init__(self, base_url: str, token: str | None, session: requests.Session | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.session = session or requests.Session()
        self.session.headers["User-Agent"] = f"tailboard-cli/{__version__}"
        if token:
            self.session.headers["Authorization"] = f"Bearer {token}"

    def competitions(self) -> list[dict[str, Any]]:
        """Return every competition with its phases."""
        return self._json("GET", "/competitions")["competitions"]

    def phase(self, phase_id: int) -> dict[str, Any]:
        """Return a phase's details, including the caller's quota."""
        return self._json("GET", f"/phases/{phase_id}")

    def submission(self, submission_id: int) -> dict[str, Any]:
        """Return one submission's status, visible scores and errors."""
        return self._json("GET", f"/submissions/{submission_id}")

    def leaderboard(self, phase_id: int) -> dict[str, Any]:
        """Return a phase's ranking as JSON."""
        return self._json("GET", f"/phases/{phase_id}/leaderboard")

    def leaderboard_csv(self, phase_id: int) -> str:
        """Return a phase's ranking as CSV text."""
        return self._request("GET", f"/phases/{phase_id}/leaderboard", params={"format": "csv"}).text

    def submit(
        self,
        phase_id: int,
        path: Path,
        *,
        description: str = "",
        method: str = "",
        metadata: dict[str, Any] | None = None,
        idempotency_key: str | None = None,
        progress: Callable[[int, int], None] | None = None,
        attempts: int = 3,
    ) -> dict[str, Any]:
        """Upload a prediction file under a method with metadata; retries of a broken upload reuse one key."""
        key = idempotency_key or uuid.uuid4().hex
        fields = {"description": description, "method": method}
        if metadata:
            fields["metadata"] = json.dumps(metadata)
        for attempt in range(1, attempts + 1):
            with path.open("rb") as handle:
                body, content_type = multipart_body(handle, path.name, fields, progress)
                headers = {"Content-Type": content_type, "Idempotency-Key": key}
                try:
                    response = self._request(
                        "POST", f"/phases/{phase_id}/submissions", data=body, headers=headers, timeout=UPLOAD_TIMEOUT
                    )
                    return response.json()
                except NetworkError:
                    if attempt == attempts:
                        raise
            time.sleep(attempt)  # the same key makes a retry of an upload that did arrive harmless
        raise AssertionError("unreachable")

    def create_team(self, competition: str, name: str) -> dict[str, Any]:
        """Create a team in a competition (the caller joins it); the answer carries its invite code."""
        return self._json("POST", f"/competitions/{competition}/teams", json={"name": name})

    def join_team(self, invite_code: str) -> dict[str, Any]:
        """Join the team of an invite code."""
        return self._json("POST", "/teams/join", json={"invite_code": invite_code})

    def leave_team(self, team_id: int) -> dict[str, Any]:
        """Leave a team (only before its first submission)."""
        return self._json("POST", f"/teams/{team_id}/leave")

    def team(self, team_id: int) -> dict[str, Any]:
        """Return a team: members, and for its members the invite code and entries."""
        return self._json("GET", f"/teams/{team_id}")

    def select(self, submission_id: int, *, selected: bool = True) -> dict[str, Any]:
        """Select (or unselect) a submission for the final ranking."""
        return self._json("POST", f"/submissions/{submission_id}/{'select' if selected else 'unselect'}")

    def add_baseline(self, phase_id: int, path: Path, *, name: str,
                     metadata: dict[str, Any] | None = None) -> dict[str, Any]:
        """Add an organizer's named baseline to a phase."""
        fields = {"name": name, **({"metadata": json.dumps(metadata)} if metadata else {})}
        with path.open("rb") as handle:
            body, content_type = multipart_body(handle, path.name, fields, None)
            return self._json("POST", f"/phases/{phase_id}/baselines", data=body,
                              headers={"Content-Type": content_type}, timeout=UPLOAD_TIMEOUT)

    def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self._request(method, path, **kwargs)
        try:
            return response.json()
        except ValueError:
            raise ApiError(response.status_code, "The server sent a response that is not JSON.") from None

    def _request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        kwargs.setdefault("timeout", TIMEOUT)
        try:
            response = self.session.request(method, self.base_url + "/api/v1" + path, **kwargs)
        except requests.RequestException as error:
            raise NetworkError(f"Cannot reach {self.base_url}: {_reason(error)}") from None
        if response.status_code >= 400:
            raise _api_error(response)
        return response


def _api_error(response: requests.Response) -> ApiError:
    try:
        body = response.json()
        message, details = body.get("error") or response.reason, body.get("details")
    except (ValueError, AttributeError):
        message, details = f"HTTP {response.status_code} {response.reason}", None
    return ApiError(response.status_code, str(message), details, response.headers.get("Retry-After"))


def _reason(error: requests.RequestException) -> str:
    if isinstance(error, requests.Timeout):
        return "the request timed out"
    if isinstance(error, requests.ConnectionError):
        return "connection failed (is the URL right and the server running?)"
    return type(error).__name__
