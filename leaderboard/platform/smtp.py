"""Sending one mail over SMTP, configured by one URL (``TAILBOARD_SMTP_URL``).

``smtp://user:password@host:port`` speaks plain SMTP (port 25 by default),
``smtp+starttls://...`` upgrades it with STARTTLS (port 587), ``smtps://...`` speaks TLS
from the start (port 465). User and password are optional and percent-decoded. Query
options: ``timeout`` (seconds, default 30) and ``cafile`` (a CA bundle to trust, e.g. a
private relay's). TLS verifies the server's certificate and name. The password never
appears in a log line or a repr (``SmtpConfig.describe``). One connection per mail:
notify/outbox.py sends few, from a background sender.
"""

from __future__ import annotations

import smtplib
import ssl
from dataclasses import dataclass, field
from email.message import EmailMessage
from urllib.parse import parse_qs, unquote, urlsplit

DEFAULT_PORTS = {"smtp": 25, "smtp+starttls": 587, "smtps": 465}
DEFAULT_TIMEOUT = 30.0


@dataclass(frozen=True)
class SmtpConfig:
    """Where and how to deliver: the parsed TAILBOARD_SMTP_URL."""

    scheme: str
    host: str
    port: int
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    timeout: float = DEFAULT_TIMEOUT
    cafile: str | None = None

    def describe(self) -> str:
        """Return the server as a log line may name it: scheme, host and port, never the credentials."""
        return f"{self.scheme}://{self.host}:{self.port}"


def parse_smtp_url(url: str) -> SmtpConfig:
    """Return the SMTP settings of a URL, or raise ValueError naming what is wrong (never quoting the password)."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise ValueError(f"TAILBOARD_SMTP_URL must start with smtp://, smtp+starttls:// or smtps://, not {scheme!r}")
    if not parts.hostname:
        raise ValueError("TAILBOARD_SMTP_URL names no host, e.g. smtp+starttls://user:password@mail.example.org")
    try:
        port = parts.port or DEFAULT_PORTS[scheme]
    except ValueError:
        raise ValueError("TAILBOARD_SMTP_URL has a port that is not a number") from None
    options = {key: values[-1] for key, values in parse_qs(parts.query).items()}
    unknown = sorted(set(options) - {"timeout", "cafile"})
    if unknown:
        raise ValueError(f"TAILBOARD_SMTP_URL has unknown options: {', '.join(unknown)} (known: timeout, cafile)")
    try:
        timeout = float(options.get("timeout", DEFAULT_TIMEOUT))
    except ValueError:
        raise ValueError("TAILBOARD_SMTP_URL's timeout is not a number of seconds") from None
    return SmtpConfig(scheme=scheme, host=parts.hostname, port=port,
                      username=unquote(parts.username) if parts.username else None,
                      password=unquote(parts.password) if parts.password is not None else None,
                      timeout=timeout, cafile=options.get("cafile"))


class SmtpTransport:
    """Deliver mails to the SMTP server of a config, one connection per mail."""

    def __init__(self, config: SmtpConfig) -> None:
        self.config = config

    def send(self, message: EmailMessage) -> None:
        """Deliver one message; raises smtplib.SMTPException or OSError when the server does not take it."""
        config = self.config
        tls = ssl.create_default_context(cafile=config.cafile) if config.scheme != "smtp" else None
        client: smtplib.SMTP
        if config.scheme == "smtps":
            client = smtplib.SMTP_SSL(config.host, config.port, timeout=config.timeout, context=tls)
        else:
            client = smtplib.SMTP(config.host, config.port, timeout=config.timeout)
        with client:
            if config.scheme == "smtp+starttls":
                client.starttls(context=tls)
            if config.username:
                client.login(config.username, config.password or "")
            client.send_message(message)


def is_permanent(error: Exception) -> bool:
    """Return whether retrying cannot help: the server refused the recipient or the mail (a 5xx answer)."""
    if isinstance(error, smtplib.SMTPRecipientsRefused):
        return True
    if isinstance(error, smtplib.SMTPAuthenticationError | smtplib.SMTPSenderRefused):
        return False  # the operator can fix the credentials or the sender address: keep trying
    return isinstance(error, smtplib.SMTPResponseException) and 500 <= error.smtp_code < 600
