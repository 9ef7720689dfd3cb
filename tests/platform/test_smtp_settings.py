"""TAILBOARD_SMTP_URL and TAILBOARD_MAIL_FROM: one URL names the server, TLS mode and login; bad ones stop the start."""

from __future__ import annotations

import pytest

from leaderboard.platform import Settings
from leaderboard.platform.smtp import SmtpConfig, parse_smtp_url


@pytest.mark.parametrize(("url", "expected"), [
    ("smtp://mail.example.org", SmtpConfig("smtp", "mail.example.org", 25)),
    ("smtp+starttls://u%40x:p%3Aw@mail.example.org", SmtpConfig("smtp+starttls", "mail.example.org", 587,
                                                               "u@x", "p:w")),
    ("smtps://u:pw@mail.example.org:2465?timeout=5&cafile=/etc/ca.pem",
     SmtpConfig("smtps", "mail.example.org", 2465, "u", "pw", 5.0, "/etc/ca.pem")),
])
def test_an_smtp_url_names_server_tls_mode_and_login(url: str, expected: SmtpConfig) -> None:
    assert parse_smtp_url(url) == expected


@pytest.mark.parametrize(("url", "said"), [
    ("http://mail.example.org", "must start with"),
    ("smtp://", "names no host"),
    ("smtp://mail.example.org:port", "port"),
    ("smtp://mail.example.org?tls=yes", "unknown options: tls"),
    ("smtp://mail.example.org?timeout=soon", "timeout"),
])
def test_a_bad_smtp_url_is_refused_with_a_reason(url: str, said: str) -> None:
    with pytest.raises(ValueError, match=said):
        parse_smtp_url(url)


def test_the_password_never_shows_in_a_repr_or_a_description() -> None:
    config = parse_smtp_url("smtps://user:hunter2-secret@mail.example.org")
    assert "hunter2" not in repr(config) and "hunter2" not in config.describe()
    with pytest.raises(ValueError) as refused:
        parse_smtp_url("ftp://user:hunter2-secret@mail.example.org")
    assert "hunter2" not in str(refused.value)


def test_mail_needs_a_sender_address() -> None:
    with pytest.raises(ValueError, match="TAILBOARD_MAIL_FROM"):
        Settings.from_env({"SECRET_KEY": "k", "TAILBOARD_SMTP_URL": "smtp://127.0.0.1:2525"})
    settings = Settings.from_env({"SECRET_KEY": "k", "TAILBOARD_SMTP_URL": "smtp://127.0.0.1:2525",
                                  "TAILBOARD_MAIL_FROM": "tb@example.org", "TAILBOARD_MAIL_SECONDS": "3"})
    assert (settings.smtp_url, settings.mail_from, settings.mail_seconds) == ("smtp://127.0.0.1:2525",
                                                                              "tb@example.org", 3.0)
    assert Settings.from_env({"SECRET_KEY": "k"}).smtp_url is None
