"""Email confirmation: new accounts follow an emailed link before they can submit (while mail is on).

The link carries a token signed with the instance's secret key (itsdangerous, salted
for this one use) holding the account id and the address it was sent to; it expires
after MAX_AGE. Confirmation is asked only while the instance sends mail
(notify/outbox.py's mail_enabled): without SMTP it is off and nobody is held back.
Accounts the operator creates (``flask --app app users create``, the demo) count as
confirmed, and so did every account that existed before confirmation (migration 0008).
The mail is queued in the same transaction as the account (accounts.register_user).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer

from leaderboard.models import User
from leaderboard.notify import mail_enabled, send_mail
from leaderboard.platform import Conflict, Forbidden, InvalidInput, ServiceContext
from leaderboard.platform.db import utcnow

SALT = "tailboard.confirm-email"
MAX_AGE = timedelta(days=3)
KIND = "confirm_email"
Link = Callable[[str], str]
"""Turns a token into the absolute address of the confirmation page (the web layer builds it)."""


def confirmation_required(ctx: ServiceContext) -> bool:
    """Return whether accounts must confirm their address before submitting (only while mail is sent)."""
    return mail_enabled(ctx.settings)


def needs_confirmation(ctx: ServiceContext, user: User) -> bool:
    """Return whether user must still confirm their address before submitting."""
    return confirmation_required(ctx) and user.email_confirmed_at is None


def ensure_confirmed(ctx: ServiceContext, *, user: User) -> None:
    """Raise Forbidden while user must still confirm their address (nothing is stored or charged)."""
    if needs_confirmation(ctx, user):
        raise Forbidden(f"Confirm your email address before submitting: open the link in the mail sent to "
                        f"{user.email} (your account page sends it again). Nothing was stored or charged.")


def queue_mail(ctx: ServiceContext, *, user: User, link: Link) -> None:
    """Queue the confirmation mail for user in the caller's transaction (user must have an id)."""
    days = MAX_AGE.days
    body = (f"Hello {user.display_name},\n\n"
            f"please confirm the email address of your Tailboard account by opening this link:\n\n"
            f"{link(make_token(ctx, user))}\n\n"
            f"The link works for {days} days. Until you confirm, you can read every public page but not "
            f"submit predictions.\n\nIf you did not create this account, ignore this mail.\n")
    send_mail(ctx, to=user.email, subject="Confirm your email address for Tailboard", body=body, kind=KIND)


def resend(ctx: ServiceContext, *, user: User, link: Link) -> None:
    """Send the confirmation mail again (Conflict when there is nothing to confirm)."""
    if not confirmation_required(ctx):
        raise Conflict("This instance sends no mail, so there is nothing to confirm: you can submit.")
    if user.email_confirmed_at is not None:
        raise Conflict("Your email address is already confirmed.")
    queue_mail(ctx, user=user, link=link)
    ctx.session.commit()


def confirm_email(ctx: ServiceContext, *, token: str) -> User:
    """Mark the account of a valid, unexpired token as confirmed and return it (InvalidInput otherwise)."""
    try:
        payload = _serializer(ctx).loads(token, max_age=int(MAX_AGE.total_seconds()))
    except SignatureExpired:
        raise InvalidInput(f"This confirmation link has expired (links work for {MAX_AGE.days} days): log in "
                           "and send yourself a new one from your account page.") from None
    except BadSignature:
        raise InvalidInput("This confirmation link is not valid: open the whole link from the mail, or send "
                           "yourself a new one from your account page.") from None
    user_id = payload.get("u") if isinstance(payload, dict) else None
    user = ctx.session.get(User, user_id) if isinstance(user_id, int) else None
    if user is None or user.email != payload.get("e"):
        raise InvalidInput("This confirmation link belongs to no account here; send yourself a new one.")
    if user.email_confirmed_at is None:
        user.email_confirmed_at = utcnow()
        ctx.session.commit()
    return user


def make_token(ctx: ServiceContext, user: User) -> str:
    """Return a signed, timestamped token naming user and the address being confirmed."""
    return str(_serializer(ctx).dumps({"u": user.id, "e": user.email}))


def _serializer(ctx: ServiceContext) -> URLSafeTimedSerializer:
    """Return the signer of confirmation tokens: the instance's secret key, salted for this use."""
    return URLSafeTimedSerializer(ctx.settings.secret_key, salt=SALT)
