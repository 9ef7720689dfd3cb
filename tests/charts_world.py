"""The long-tail chart world of the page and browser tests: 300 items on a popularity scale, files with confidences."""

from __future__ import annotations

import io
import json
import random
from typing import Any

from leaderboard.submissions import accept_submission

N_ITEMS = 300


def labels(*, private: bool = False) -> bytes:
    """300 binary items with popularity 1..300 (ten curve bins of 30), a category, and a split when private."""
    rnd = random.Random(5)
    rows = []
    for i in range(N_ITEMS):
        record: dict[str, Any] = {"id": f"q{i:03d}", "label": rnd.random() < 0.5, "category": "abc"[i % 3],
                                  "popularity": i + 1}
        if private:
            record["split"] = "private" if i % 2 else "public"
        rows.append(json.dumps(record))
    return ("\n".join(rows) + "\n").encode()


def answers(seed: int, *, skill: float = 0.8, only: set[str] | None = None) -> bytes:
    """A file with confidences: right more often on popular items; ids outside ``only`` abstain (when given)."""
    rnd = random.Random(seed)
    truth = {json.loads(line)["id"]: json.loads(line)["label"] for line in labels().decode().splitlines()}
    lines = ["id,prediction,confidence"]
    for i, (item, label) in enumerate(truth.items()):
        if only is not None and item not in only:
            lines.append(f"{item},,")
            continue
        right = rnd.random() < skill * (0.5 + i / (2 * N_ITEMS))
        lines.append(f"{item},{str(label == right).lower()},{rnd.choice([0.55, 0.65, 0.75, 0.85, 0.95]):.2f}")
    return ("\n".join(lines) + "\n").encode()


def upload(ctx: Any, phase: Any, user: Any, data: bytes, method: str | None = None) -> Any:
    """Upload a file through the service (scored inline)."""
    return accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv", stream=io.BytesIO(data),
                             method=method)
