"""The instance bench/oracle_attacks.py attacks: built with the README's commands, served by gunicorn, reached by HTTP.

``build`` follows the README's "Running an instance" in its own data dir (alembic, users,
competitions, ``python -m scoring import colota ... --originals``, ``phases create
--from-import``), with the real CoLoTa QA release when ../shared exists and a synthetic
CoLoTa-shaped phase otherwise. ``serve`` starts gunicorn with deploy/gunicorn.conf.py on a
free loopback port, running bench/oracle_app.py (the app, with issue 17's switches off when
asked). ``Account`` is one participant: registered through /register, token made on
/account, each from its own loopback address, as a script with a few addresses would.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import socket
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests
from requests.adapters import HTTPAdapter

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "datasets" / "colota"
PASSWORD = "oracle-bench-pass"


@dataclass(frozen=True)
class Item:
    """One item: what the public questions file says, and the truth (used only to score the attacks)."""

    id: str
    categories: tuple[str, ...]
    popularity: str
    label: bool
    private: bool


@dataclass
class Instance:
    """A built instance: its environment, phases by name, items (with truth) and source of data."""

    env: dict[str, str]
    phases: dict[str, int]
    items: list[Item]
    source: str
    url: str = ""


def cli(env: dict[str, str], *args: str) -> str:
    """Run a command of the README in the instance's environment; return its last output line."""
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"{' '.join(args)} failed: {done.stderr[-2000:]}")
    lines = done.stdout.strip().splitlines()
    return lines[-1] if lines else ""


def build(tmp: Path, *, defence_off: bool) -> Instance:
    """Create the instance in tmp: an organizer, a competition and the four attacked phases."""
    env = {**os.environ, "TAILBOARD_DATA_DIR": str(tmp / "data"), "SECRET_KEY": "oracle-bench",
           "DATABASE_URL": f"sqlite:///{tmp / 'data' / 'tailboard.sqlite3'}", "TAILBOARD_SWEEP_SECONDS": "0",
           "TAILBOARD_API_RATELIMIT": "100000 per minute", "ORACLE_DEFENCE_OFF": "1" if defence_off else ""}
    bin_ = ROOT / ".venv" / "bin"
    flask = [str(bin_ / "flask"), "--app", "app"]
    (tmp / "data").mkdir(parents=True)
    cli(env, str(bin_ / "alembic"), "upgrade", "head")
    cli(env, *flask, "users", "create", "org@example.org", "--password", "organizer-pass", "--organizer")
    owner = ["--owner", "org@example.org"] if "--owner" in cli_help(env, *flask, "competitions", "create") else []
    cli(env, *flask, "competitions", "create", "colota", "--title", "CoLoTa", *owner)
    imported, source = import_phase(env, tmp)
    items = read_items(imported)
    with_split = variant(imported, tmp / "split", items, split=True)
    # The ladder needs a stored public primary, and a dotted primary (CoLoTa's popularity.tail.accuracy)
    # is stored as None (scoring_runs._metric reads overall only): nothing would ever be released.
    by_accuracy = variant(imported, tmp / "accuracy", items, primary="accuracy")
    generous = ["--max-per-day", "1000"]  # the secrecy attacks need uploads; attack 6 uses the default
    phases = {
        "exact": ["--from-import", str(imported), *generous],
        "split": ["--from-import", str(with_split), *generous],
        "ladder": ["--from-import", str(by_accuracy), "--public-feedback", "ladder", *generous],
        "no_quota": ["--from-import", str(imported)],
    }
    ids = {}
    for name, options in phases.items():
        ids[name] = int(cli(env, *flask, "phases", "create", "colota", "--name", name, *options))
        cli(env, *flask, "phases", "open", str(ids[name]))
    return Instance(env=env, phases=ids, items=items, source=source)


def cli_help(env: dict[str, str], *args: str) -> str:
    """Return a command's --help text."""
    return subprocess.run([*args, "--help"], cwd=ROOT, env=env, capture_output=True, text=True, check=False).stdout


def import_phase(env: dict[str, str], tmp: Path) -> tuple[Path, str]:
    """Import the real CoLoTa QA release with its originals (README), or write a synthetic one; return its dir."""
    out = tmp / "colota-qa"
    if (SHARED / "CoLoTa_qa.json").exists():
        originals = SHARED / "baselines" / "data" / "QA-original.csv"
        cli(env, str(ROOT / ".venv" / "bin" / "python"), "-m", "scoring", "import", "colota",
            str(SHARED / "CoLoTa_qa.json"), str(out), "--originals", str(originals))
        return out, "CoLoTa QA release (--originals)"
    synthetic(out)
    return out, "synthetic CoLoTa-shaped phase (../shared not found)"


def synthetic(out: Path, n: int = 1838, seed: int = 17) -> None:
    """Write a CoLoTa-shaped import dir: tail items in 1-3 of 21 skewed categories, 149 head items without one."""
    rng = random.Random(seed)
    names = [f"strategy{k:02d}" for k in range(21)]
    weights = [1.0 / (k + 2) ** 0.8 for k in range(len(names))]
    out.mkdir(parents=True)
    labels, questions = [], []
    for i in range(n):
        head = i >= n - 149
        chosen: list[str] = []
        while not head and len(chosen) < rng.choices((1, 2, 3), weights=(0.25, 0.5, 0.25))[0]:
            pick = rng.choices(names, weights=weights)[0]
            chosen += [pick] if pick not in chosen else []
        row: dict[str, Any] = {"id": f"S{i + 1}", "popularity": "head" if head else "tail"}
        if chosen:
            row["category"] = chosen
        questions.append(row)
        labels.append({**row, "label": rng.random() < 0.5})
    (out / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in labels))
    (out / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in questions))
    config = {"task_type": "binary", "primary_metric": "popularity.tail.accuracy", "breakdowns": ["category"],
              "missing_ids": "abstain", "views": [{"name": "Overall", "metric": "accuracy"}]}
    (out / "phase.json").write_text(json.dumps(config))


def read_items(imported: Path) -> list[Item]:
    """Return the items of an import dir: public fields and the truth; every third (by id digest) private."""
    items = []
    for line in (imported / "labels.jsonl").read_text().splitlines():
        row = json.loads(line)
        categories = row.get("category") or []
        items.append(Item(id=row["id"], categories=tuple(categories if isinstance(categories, list) else [categories]),
                          popularity=str(row.get("popularity")), label=bool(row["label"]),
                          private=int(hashlib.sha256(row["id"].encode()).hexdigest(), 16) % 3 == 0))
    return items


def variant(imported: Path, out: Path, items: list[Item], *, split: bool = False, primary: str | None = None) -> Path:
    """Write the import dir again, with a private split (the items' ``private``) or another primary metric."""
    out.mkdir(parents=True)
    private = {item.id: item.private for item in items}
    rows = [json.loads(line) for line in (imported / "labels.jsonl").read_text().splitlines()]
    if split:
        rows = [{**row, "split": "private" if private[row["id"]] else "public"} for row in rows]
    (out / "labels.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    config = json.loads((imported / "phase.json").read_text())
    if primary is not None:
        config["primary_metric"] = primary
    (out / "phase.json").write_text(json.dumps(config))
    (out / "questions.jsonl").write_bytes((imported / "questions.jsonl").read_bytes())
    return out


def serve(instance: Instance) -> subprocess.Popen[bytes]:
    """Start gunicorn (deploy/gunicorn.conf.py, bench/oracle_app.py) on a free loopback port; wait until it answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    env = {**instance.env, "GUNICORN_BIND": f"127.0.0.1:{port}", "GUNICORN_ACCESSLOG": "", "WEB_CONCURRENCY": "3"}
    process = subprocess.Popen([str(ROOT / ".venv" / "bin" / "gunicorn"), "-c", "deploy/gunicorn.conf.py",
                                "--pythonpath", str(ROOT / "bench"), "oracle_app:app"],
                               cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    instance.url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            requests.get(instance.url + "/", timeout=10)
            return process
        except requests.RequestException:
            time.sleep(0.3)
    process.terminate()
    raise RuntimeError("gunicorn did not start")


class _From(HTTPAdapter):
    """Connections from one loopback source address."""

    def __init__(self, address: str) -> None:
        self.address = address
        super().__init__()

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        kwargs["source_address"] = (self.address, 0)
        super().init_poolmanager(*args, **kwargs)


class Account:
    """A participant registered through /register, calling the API with a token made on /account."""

    def __init__(self, url: str, n: int) -> None:
        self.url = url
        self.http = requests.Session()
        self.http.mount("http://", _From(f"127.0.{2 + n // 250}.{1 + n % 250}"))
        form = {"email": f"acct{n}@example.net", "display_name": f"Account {n}", "password": PASSWORD,
                "confirm": PASSWORD, "csrf_token": self._csrf("/register")}
        made = self.http.post(url + "/register", data=form, allow_redirects=False, timeout=30)
        if made.status_code != 303:
            raise RuntimeError(f"/register answered {made.status_code}")
        page = self.http.post(url + "/account/tokens", data={"name": "script", "csrf_token": self._csrf("/account")},
                              timeout=30).text
        found = re.search(r'id="new-token"[^>]*value="([^"]+)"', page)
        if not found:
            raise RuntimeError("no token on the token page")
        self.http.headers["Authorization"] = f"Bearer {found.group(1)}"

    def _csrf(self, path: str) -> str:
        found = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', self.http.get(self.url + path, timeout=30).text)
        if not found:
            raise RuntimeError(f"no csrf_token on {path}")
        return found.group(1)

    def upload(self, phase_id: int, answers: Mapping[str, bool | None]) -> requests.Response:
        """Upload a prediction CSV answering these ids (None abstains)."""
        body = "id,prediction\n" + "".join(
            f"{k},{'' if v is None else ('yes' if v else 'no')}\n" for k, v in answers.items())
        return self.http.post(f"{self.url}/api/v1/phases/{phase_id}/submissions",
                              files={"file": ("p.csv", body.encode())}, timeout=120)

    def read(self, phase_id: int, answers: Mapping[str, bool | None]) -> dict[str, Any]:
        """Upload a file and return the scores this account reads for it once scored."""
        made = self.upload(phase_id, answers)
        if made.status_code != 202:
            raise RuntimeError(f"upload answered {made.status_code}: {made.text[:300]}")
        for _ in range(600):
            body = self.http.get(f"{self.url}/api/v1/submissions/{made.json()['id']}", timeout=30).json()
            if body["status"] == "scored":
                return dict(body["scores"])
            if body["status"] == "failed":
                raise RuntimeError(f"scoring failed: {body}")
            time.sleep(0.05)
        raise RuntimeError("not scored within 30 s")
