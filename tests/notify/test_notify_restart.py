"""No notice is lost or doubled across a killed process: a scorer SIGKILLed before the senders ran, a sender
SIGKILLed after its claim, or after the receiver took the POST but before it was recorded.

The killed process is a real subprocess on the same database; the senders that run after
it are this process's (a restart). Mail goes to aiosmtpd, webhooks to an HTTP receiver on
loopback; every test runs on both databases.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from smtp_server import MailServer
from sqlalchemy import select
from webhook_receiver import Receiver

from leaderboard.accounts import OPERATOR
from leaderboard.models import MailOutbox, WebhookDelivery
from leaderboard.notify import webhooks
from leaderboard.organizing import notifications
from leaderboard.platform.db import utcnow
from leaderboard.workers.mail_sender import MailSender
from leaderboard.workers.webhook_sender import WebhookSender

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import io, json, os, signal, sys
from leaderboard.board import board_changed
from leaderboard.models import User
from leaderboard.notify import webhooks
from leaderboard.platform import Settings, build_runtime
from leaderboard.submissions import accept_submission, score_submission

args = json.loads(sys.argv[1])
runtime = build_runtime(Settings.from_env({}, **args["settings"]), score=score_submission,
                        board_changed=board_changed)
with runtime.sessions() as session:
    ctx = runtime.context(session)
    if args["step"] == "score":
        user = session.get(User, args["user_id"])
        accept_submission(ctx, phase_id=args["phase_id"], user=user, filename="p.csv",
                          stream=io.BytesIO(args["content"].encode()))
    elif args["step"] == "claim":
        assert webhooks._claim(ctx, args["row_id"], now=webhooks.utcnow()) is not None
    elif args["step"] == "post":
        class DieAfterPost(webhooks.HttpTransport):
            def post(self, url, body, headers):
                status = super().post(url, body, headers)
                os.kill(os.getpid(), signal.SIGKILL)
        webhooks.deliver_due(ctx, transport=DieAfterPost())
os.kill(os.getpid(), signal.SIGKILL)  # before any sender runs
"""


@pytest.fixture
def mail_server() -> Iterator[MailServer]:
    """Return a running SMTP server on loopback."""
    with MailServer() as server:
        yield server


@pytest.fixture
def settings_overrides(mail_server: MailServer) -> dict[str, Any]:
    """Send mail to the loopback server."""
    return {"smtp_url": f"smtp://127.0.0.1:{mail_server.port}", "mail_from": "tailboard@example.org"}


def run_child(settings: Any, **args: Any) -> None:
    """Run one step in a subprocess on the same database and expect it to die by SIGKILL."""
    values = {k: (str(v) if isinstance(v, Path) else v) for k, v in dataclasses.asdict(settings).items()}
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps({"settings": values, **args})], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == -9, done.stderr[-3000:]


@pytest.fixture
def scene(ctx, make_phase, make_user) -> dict[str, Any]:
    """Return a phase with a webhook and a confirmed participant (no mail waiting yet)."""
    phase = make_phase()
    user = make_user("ada@example.org")
    user.email_confirmed_at = utcnow()
    ctx.session.execute(MailOutbox.__table__.delete())
    ctx.session.commit()
    return {"phase": phase, "user": user}


def test_a_scorer_killed_before_sending_loses_nothing_and_a_restart_sends_once(
        ctx, settings, runtime, scene, make_predictions, mail_server) -> None:
    with Receiver() as receiver:
        registered = notifications.register_webhook(ctx, slug=scene["phase"].competition.slug, url=receiver.url,
                                                    events=["submission.scored"], actor=OPERATOR)
        run_child(settings, step="score", user_id=scene["user"].id, phase_id=scene["phase"].id,
                  content=make_predictions().decode())
        assert receiver.posts == [] and mail_server.messages == []
        mail, hooks = MailSender(runtime), WebhookSender(runtime)
        assert (mail.run_once(), hooks.run_once()) == (1, 1)
        assert (mail.run_once(), hooks.run_once()) == (0, 0)
        assert mail_server.wait_for("ada@example.org")["Subject"].endswith("was scored")
        assert len(mail_server.messages) == 1
        (post,) = receiver.wait_for(1)
        assert webhooks.verify(registered.secret, post.body, post.headers["X-Tailboard-Signature"])


def test_a_sender_killed_after_its_claim_leaves_the_delivery_due_later(
        ctx, settings, runtime, scene, make_predictions) -> None:
    import io

    from leaderboard.submissions import accept_submission

    with Receiver() as receiver:
        notifications.register_webhook(ctx, slug=scene["phase"].competition.slug, url=receiver.url,
                                       events=["submission.scored"], actor=OPERATOR)
        accept_submission(ctx, phase_id=scene["phase"].id, user=scene["user"], filename="p.csv",
                          stream=io.BytesIO(make_predictions()))
        row_id = ctx.session.scalar(select(WebhookDelivery.id))
        run_child(settings, step="claim", row_id=row_id)
        now = utcnow()
        assert webhooks.deliver_due(ctx, now=now) == 0  # the dead sender's claim still holds it
        assert webhooks.deliver_due(ctx, now=now + timedelta(seconds=webhooks.CLAIM_SECONDS + 1)) == 1
        assert len(receiver.wait_for(1)) == 1


def test_a_sender_killed_after_the_post_repeats_it_and_the_receiver_dedupes_by_delivery_id(
        ctx, settings, runtime, scene, make_predictions) -> None:
    import io

    from leaderboard.submissions import accept_submission

    with Receiver() as receiver:
        notifications.register_webhook(ctx, slug=scene["phase"].competition.slug, url=receiver.url,
                                       events=["submission.scored"], actor=OPERATOR)
        accept_submission(ctx, phase_id=scene["phase"].id, user=scene["user"], filename="p.csv",
                          stream=io.BytesIO(make_predictions()))
        run_child(settings, step="post")
        assert len(receiver.wait_for(1)) == 1
        later = utcnow() + timedelta(seconds=webhooks.CLAIM_SECONDS + 1)
        assert webhooks.deliver_due(ctx, now=later) == 1
        first, second = receiver.wait_for(2)
        assert first.body == second.body and first.headers["X-Tailboard-Signature"] == second.headers[
            "X-Tailboard-Signature"]
        assert len(receiver.by_delivery()) == 1
        assert webhooks.deliver_due(ctx, now=later + timedelta(hours=2)) == 0
