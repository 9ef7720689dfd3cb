"""What a participant or organizer does on the site over HTTP: log in, upload, read a submission, start a job.

Built on loadgen.fetch; every call goes to the served instance on loopback, as a browser
(the login form, its CSRF token and session cookie) or an API client (a bearer token) would.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any
from urllib.parse import urlencode, urlsplit

from deadline.loadgen import Reply, fetch
from deadline.world import PASSWORD, Person

CSRF = re.compile(rb'name="csrf_token"[^>]*value="([^"]+)"|value="([^"]+)"[^>]*name="csrf_token"')


def board_page(phase_id: int) -> str:
    """Return the path of a phase's leaderboard page."""
    return f"/phases/{phase_id}/leaderboard"


def board_api(phase_id: int) -> str:
    """Return the path of a phase's leaderboard in the API."""
    return f"/api/v1/phases/{phase_id}/leaderboard"


def bearer(token: str) -> dict[str, str]:
    """Return the Authorization header of an API token."""
    return {"Authorization": f"Bearer {token}"}


async def login(port: int, person: Person, *, source: str, next_path: str) -> str:
    """Log in through the login form as person; return the Cookie header value of the logged-in session."""
    form = await fetch(port, "GET", f"/login?{urlencode({'next': next_path})}", source=source)
    match = CSRF.search(form.body)
    if form.status != 200 or match is None:
        raise RuntimeError(f"login form: HTTP {form.status}, no CSRF token")
    jar = form.cookies()
    body = urlencode({"csrf_token": (match.group(1) or match.group(2)).decode(), "email": person.email,
                      "password": PASSWORD}).encode()
    answer = await fetch(port, "POST", f"/login?{urlencode({'next': next_path})}", source=source, body=body,
                         headers={"Content-Type": "application/x-www-form-urlencoded", "Cookie": _cookie(jar)})
    if answer.status not in (302, 303):
        raise RuntimeError(f"login as {person.email}: HTTP {answer.status} {answer.body[:200]!r}")
    jar.update(answer.cookies())
    landing = await fetch(port, "GET", urlsplit(answer.header("Location") or next_path).path, source=source,
                          headers={"Cookie": _cookie(jar)})
    jar.update(landing.cookies())  # drops a flashed message, if the login left one
    if landing.status != 200 or person.name.encode() not in landing.body:
        raise RuntimeError(f"after logging in as {person.email}: HTTP {landing.status}, name not on the page")
    return _cookie(jar)


def _cookie(jar: dict[str, str]) -> str:
    """Return a Cookie header value."""
    return "; ".join(f"{name}={value}" for name, value in jar.items())


def multipart(data: bytes, *, filename: str = "predictions.csv", description: str = "") -> tuple[bytes, str]:
    """Return a multipart/form-data body with the prediction file and a description, and its content type."""
    boundary = uuid.uuid4().hex
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="description"\r\n\r\n{description}\r\n'.encode(),
             (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{filename}"\r\n'
              f"Content-Type: text/csv\r\n\r\n").encode() + data + b"\r\n",
             f"--{boundary}--\r\n".encode()]
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


async def upload(port: int, phase_id: int, person: Person, data: bytes, *, source: str = "127.0.0.1",
                 timeout: float = 300.0) -> tuple[Reply, int | None]:
    """Upload a prediction file through the API with an Idempotency-Key; return the reply and the submission id."""
    body, content_type = multipart(data, description="deadline bench")
    headers = {**bearer(person.token), "Content-Type": content_type, "Idempotency-Key": str(uuid.uuid4())}
    reply = await fetch(port, "POST", f"/api/v1/phases/{phase_id}/submissions", source=source, headers=headers,
                        body=body, timeout=timeout)
    submission_id = None
    if reply.status == 202:
        submission_id = int(json.loads(reply.body)["id"])
    return reply, submission_id


async def get_json(port: int, path: str, *, token: str | None = None, source: str = "127.0.0.1",
                   timeout: float = 60.0) -> tuple[int, Any]:
    """GET an API path; return the status and the parsed body (None when it is not JSON)."""
    reply = await fetch(port, "GET", path, source=source, headers=bearer(token) if token else None, timeout=timeout)
    try:
        return reply.status, json.loads(reply.body)
    except ValueError:
        return reply.status, None


async def post_json(port: int, path: str, *, token: str, timeout: float = 60.0) -> tuple[Reply, Any]:
    """POST an empty body to an API path with a token; return the reply and its parsed body."""
    reply = await fetch(port, "POST", path, headers=bearer(token), timeout=timeout)
    try:
        return reply, json.loads(reply.body)
    except ValueError:
        return reply, None


async def submission(port: int, submission_id: int, person: Person) -> dict[str, Any]:
    """Return a submission as its owner reads it in the API ({} when the call failed)."""
    status, body = await get_json(port, f"/api/v1/submissions/{submission_id}", token=person.token)
    return body if status == 200 and isinstance(body, dict) else {"status": f"http {status}"}
