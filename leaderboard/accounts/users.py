"""Accounts: registration, password checks and personal API tokens."""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import timedelta

from email_validator import EmailNotValidError, validate_email
from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from werkzeug.security import check_password_hash, generate_password_hash

from leaderboard.accounts import confirmation
from leaderboard.models import ApiToken, User
from leaderboard.platform import Conflict, InvalidInput, NotFound, ServiceContext, Unauthorized
from leaderboard.platform.db import utcnow

TOKEN_PREFIX = "tb_"
MIN_PASSWORD_LENGTH = 8
MAX_EMAIL_LENGTH = 320
LAST_USED_RESOLUTION = timedelta(minutes=1)
SYSTEM_EMAIL = "system@tailboard.invalid"
SYSTEM_NAME = "Tailboard"
_NAME_RE = re.compile(r"^[\w .\-]{2,80}$")
# A hash no password can match: werkzeug hashes always contain '$'.
_UNUSABLE_PASSWORD = "!"


def normalize_email(email: str) -> str:
    """Return the email trimmed and lower-cased (how it is stored and looked up)."""
    return email.strip().lower()


def check_email(email: str) -> str:
    """Return the address normalized for storage, or raise InvalidInput: the one email rule of web, CLI and API.

    Syntax only (no DNS lookup); special-use domains that can never receive mail
    (.test, .invalid, .localhost, .local, .onion, .arpa) are refused.
    """
    address = email.strip()
    if len(address) > MAX_EMAIL_LENGTH:
        raise InvalidInput(f"An email address has at most {MAX_EMAIL_LENGTH} characters.")
    try:
        validate_email(address, check_deliverability=False)
    except EmailNotValidError as error:
        raise InvalidInput(f"Not a valid email address: {error}") from None
    return normalize_email(address)


def register_user(
    ctx: ServiceContext,
    *,
    email: str,
    password: str,
    display_name: str | None = None,
    is_organizer: bool = False,
    confirmed: bool = False,
    confirm_link: confirmation.Link | None = None,
) -> User:
    """Create an account; the display name defaults to the email's local part.

    ``confirmed`` (the operator's accounts) marks its address confirmed now; otherwise,
    with ``confirm_link`` and mail on, the confirmation mail is queued in the same commit.
    """
    address = check_email(email)
    if len(password) < MIN_PASSWORD_LENGTH:
        raise InvalidInput(f"The password must have at least {MIN_PASSWORD_LENGTH} characters.")
    if ctx.session.scalar(select(User.id).where(User.email == address)) is not None:
        raise Conflict("An account with this email already exists.")
    name = _checked_name(display_name) if display_name else _free_name(ctx, address.split("@")[0])
    if ctx.session.scalar(select(User.id).where(func.lower(User.display_name) == name.lower())) is not None:
        raise Conflict(f"The display name {name!r} is taken.")
    user = User(
        email=address,
        display_name=name,
        password_hash=generate_password_hash(password),
        is_organizer=is_organizer,
        email_confirmed_at=utcnow() if confirmed else None,
    )
    ctx.session.add(user)
    try:
        ctx.session.flush()
        if not confirmed and confirm_link is not None:
            confirmation.queue_mail(ctx, user=user, link=confirm_link)
        ctx.session.commit()
    except IntegrityError:
        ctx.session.rollback()
        raise Conflict("An account with this email or display name already exists.") from None
    return user


def authenticate(ctx: ServiceContext, *, email: str, password: str) -> User:
    """Return the user whose email and password match, else raise Unauthorized."""
    user = ctx.session.scalar(select(User).where(User.email == normalize_email(email)))
    if user is None or not check_password_hash(user.password_hash, password):
        raise Unauthorized("Wrong email or password.")
    return user


def end_sessions(ctx: ServiceContext, *, user: User) -> None:
    """End every web session of user (logout): cookies issued before now no longer log in."""
    ctx.session.execute(update(User).where(User.id == user.id).values(session_version=User.session_version + 1))
    ctx.session.commit()


def get_user_by_email(ctx: ServiceContext, email: str) -> User:
    """Return the user with this email, else raise NotFound."""
    user = ctx.session.scalar(select(User).where(User.email == normalize_email(email)))
    if user is None:
        raise NotFound(f"No account with the email {email.strip()!r}.")
    return user


def system_user(ctx: ServiceContext) -> User:
    """Return the account that owns built-in baselines, creating it on first use (no login possible)."""
    query = select(User).where(User.email == SYSTEM_EMAIL)
    user = ctx.session.scalar(query)
    if user is not None:
        return user
    # Created in its own session so a concurrent creator only costs a retry of the select.
    with ctx.runtime.sessions() as session:
        taken = session.scalar(select(User.id).where(func.lower(User.display_name) == SYSTEM_NAME.lower()))
        name = SYSTEM_NAME if taken is None else f"{SYSTEM_NAME} {secrets.token_hex(3)}"
        session.add(User(email=SYSTEM_EMAIL, display_name=name, password_hash=_UNUSABLE_PASSWORD))
        try:
            session.commit()
        except IntegrityError:
            session.rollback()
    user = ctx.session.scalar(query)
    if user is None:
        raise Conflict("The system account could not be created; try again.")
    return user


def create_token(ctx: ServiceContext, *, user: User, name: str = "default") -> tuple[ApiToken, str]:
    """Create an API token for user; return the row and the plaintext (shown only once)."""
    name = name.strip() or "default"
    if len(name) > 80:
        raise InvalidInput("A token name has at most 80 characters.")
    plaintext = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken(user_id=user.id, name=name, token_hash=hash_token(plaintext), prefix=plaintext[:10])
    ctx.session.add(token)
    ctx.session.commit()
    return token, plaintext


def list_tokens(ctx: ServiceContext, *, user: User) -> list[ApiToken]:
    """Return the user's tokens that are not revoked, newest first."""
    query = (
        select(ApiToken)
        .where(ApiToken.user_id == user.id, ApiToken.revoked_at.is_(None))
        .order_by(ApiToken.created_at.desc(), ApiToken.id.desc())
    )
    return list(ctx.session.scalars(query))


def revoke_token(ctx: ServiceContext, *, user: User, token_id: int) -> None:
    """Revoke one of the user's tokens; another user's token is NotFound."""
    token = ctx.session.get(ApiToken, token_id)
    if token is None or token.user_id != user.id or token.revoked_at is not None:
        raise NotFound("No such token.")
    token.revoked_at = utcnow()
    ctx.session.commit()


def user_for_token(ctx: ServiceContext, plaintext: str) -> User | None:
    """Return the owner of a valid, unrevoked token (and note its use), else None."""
    if not plaintext or not plaintext.startswith(TOKEN_PREFIX):
        return None
    token = ctx.session.scalar(
        select(ApiToken).where(ApiToken.token_hash == hash_token(plaintext), ApiToken.revoked_at.is_(None))
    )
    if token is None:
        return None
    now = utcnow()
    # Written at most once a minute: a busy script must not turn every request into a write.
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
        token.last_used_at = now
        ctx.session.commit()
    return token.user


def hash_token(plaintext: str) -> str:
    """Return the SHA-256 hex digest under which a token is stored."""
    return hashlib.sha256(plaintext.encode("utf-8")).hexdigest()


def _checked_name(name: str) -> str:
    """Return the trimmed display name or raise InvalidInput."""
    name = " ".join(name.split())
    if not _NAME_RE.match(name):
        raise InvalidInput("A display name has 2 to 80 letters, digits, spaces, dots, dashes or underscores.")
    return name


def _free_name(ctx: ServiceContext, base: str) -> str:
    """Return a display name derived from base that no account uses yet."""
    stem = re.sub(r"[^\w.\-]", "-", base)[:70].strip(".-") or "user"
    if len(stem) < 2:
        stem = f"{stem}-user"
    taken = set(
        ctx.session.scalars(select(func.lower(User.display_name)).where(User.display_name.like(f"{stem}%")))
    )
    candidate, n = stem, 1
    while candidate.lower() in taken:
        n += 1
        candidate = f"{stem}-{n}"
    return candidate
