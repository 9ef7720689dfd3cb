"""The attacker's world: a label file with known truth, phases made through the API, uploads read back.

Everything an attack learns comes from API answers a participant gets with their token;
the truth (labels, splits) is only used to score the attack afterwards.
"""

from __future__ import annotations

import io
import json
import random
from dataclasses import dataclass
from typing import Any

N_ITEMS = 120
CATEGORIES = 10
PER_CATEGORY = N_ITEMS // CATEGORIES


@dataclass(frozen=True)
class Item:
    """One item of the attacked phase, with the truth the attacker is after."""

    id: str
    label: bool
    category: str
    private: bool


def make_items(seed: int = 7) -> list[Item]:
    """Return 120 binary items in 10 categories of 12; the first of every three in a category is private."""
    rng = random.Random(seed)
    return [Item(id=f"q{i:03d}", label=rng.random() < 0.5, category=f"c{i // PER_CATEGORY}",
                 private=(i % PER_CATEGORY) % 3 == 0) for i in range(N_ITEMS)]


def label_file(items: list[Item], *, private: bool) -> bytes:
    """Return the JSON Lines label file; without private, no item has a split."""
    rows = []
    for n, item in enumerate(items):
        row: dict[str, Any] = {"id": item.id, "label": item.label, "category": item.category,
                               "popularity": "head" if n % 2 else "tail"}
        if private:
            row["split"] = "private" if item.private else "public"
        rows.append(json.dumps(row))
    return ("\n".join(rows) + "\n").encode()


def csv_file(answers: dict[str, bool | None], confidences: dict[str, float] | None = None) -> bytes:
    """Return a prediction CSV answering these ids (None abstains); every other id is left out."""
    header = "id,prediction" + (",confidence" if confidences is not None else "")
    lines = [header]
    for item_id, answer in answers.items():
        value = "" if answer is None else ("yes" if answer else "no")
        line = f"{item_id},{value}"
        if confidences is not None:
            line += f",{confidences.get(item_id, '') if answer is not None else ''}"
        lines.append(line)
    return ("\n".join(lines) + "\n").encode()


@dataclass
class Caller:
    """A user and their API token."""

    token: str

    @property
    def headers(self) -> dict[str, str]:
        """Return the Authorization header."""
        return {"Authorization": f"Bearer {self.token}"}


class Platform:
    """The platform as seen through its HTTP API (Flask test client)."""

    def __init__(self, client: Any, organizer: Caller) -> None:
        self.client = client
        self.organizer = organizer
        self.phases = 0

    def phase(self, items: list[Item], *, private: bool = False, labels: bytes | None = None,
              config: dict[str, Any] | None = None, **settings: Any) -> int:
        """Create and open a phase on items (or on a given label file and config) with these probing settings."""
        self.phases += 1
        slug = f"attack-{self.phases}"
        made = self.client.post("/api/v1/competitions", json={"slug": slug, "title": slug},
                                headers=self.organizer.headers)
        assert made.status_code == 201, made.get_json()
        labels = label_file(items, private=private) if labels is None else labels
        settings = {"max_per_day": "unlimited", **settings}  # attacks measure a mechanism, not the daily quota
        form = {"name": "Attacked", "labels": (io.BytesIO(labels), "labels.jsonl"),
                "config": json.dumps(config or {"task_type": "binary"}),
                **{key: str(value) for key, value in settings.items() if value is not None}}  # None: not sent
        created = self.client.post(f"/api/v1/competitions/{slug}/phases", data=form, headers=self.organizer.headers)
        assert created.status_code == 201, created.get_json()
        phase_id = int(created.get_json()["id"])
        assert self.client.post(f"/api/v1/phases/{phase_id}/open", headers=self.organizer.headers).status_code == 200
        return phase_id

    def close(self, phase_id: int) -> None:
        """Close the phase (the private split is shown from now on)."""
        assert self.client.post(f"/api/v1/phases/{phase_id}/close", headers=self.organizer.headers).status_code == 200

    def upload(self, caller: Caller, phase_id: int, content: bytes) -> Any:
        """Upload a prediction file; return the response (closing it runs the deferred scoring)."""
        response = self.client.post(f"/api/v1/phases/{phase_id}/submissions",
                                    data={"file": (io.BytesIO(content), "p.csv")}, headers=caller.headers)
        response.close()
        return response

    def submit(self, caller: Caller, phase_id: int, content: bytes) -> int:
        """Upload a file that must be accepted; return its submission id."""
        response = self.upload(caller, phase_id, content)
        assert response.status_code == 202, response.get_json()
        return int(response.get_json()["id"])

    def scores(self, caller: Caller, submission_id: int) -> dict[str, Any]:
        """Return the scores the caller reads for a submission (it must be scored)."""
        body = self.client.get(f"/api/v1/submissions/{submission_id}", headers=caller.headers).get_json()
        assert body["status"] == "scored", body
        return dict(body["scores"])

    def upload_and_read(self, caller: Caller, phase_id: int, content: bytes) -> dict[str, Any]:
        """Upload a file and return the scores the caller can read for it."""
        return self.scores(caller, self.submit(caller, phase_id, content))
