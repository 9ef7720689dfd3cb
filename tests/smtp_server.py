"""A real SMTP server on loopback for the mail tests (aiosmtpd), with optional login and TLS.

``MailServer`` records every message it accepts; ``wait_for`` waits (up to a deadline,
never a timed assertion) until a message for an address has arrived. ``self_signed``
writes a certificate for 127.0.0.1 that the client trusts through ``?cafile=``.
"""

from __future__ import annotations

import datetime as dt
import email
import ipaddress
import ssl
import threading
import time
from dataclasses import dataclass, field
from email.message import Message
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from ports import free_port


@dataclass
class Recorder:
    """The aiosmtpd handler: keeps each accepted message with its envelope recipients."""

    messages: list[tuple[list[str], Message]] = field(default_factory=list)
    refuse_with: str | None = None  # e.g. "550 no such user": answer DATA with this instead
    arrived: threading.Condition = field(default_factory=threading.Condition)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 (aiosmtpd's name)
        """Accept (or refuse) one message."""
        if self.refuse_with:
            return self.refuse_with
        message = email.message_from_bytes(envelope.original_content or envelope.content)
        with self.arrived:
            self.messages.append((list(envelope.rcpt_tos), message))
            self.arrived.notify_all()
        return "250 Message accepted for delivery"


class MailServer:
    """An aiosmtpd server on 127.0.0.1; a context manager that starts and stops it."""

    def __init__(self, *, login: tuple[str, str] | None = None, tls: ssl.SSLContext | None = None,
                 implicit_tls: bool = False) -> None:
        self.port = free_port()
        self.recorder = Recorder()
        options: dict[str, Any] = {"hostname": "127.0.0.1", "port": self.port}
        if login is not None:
            options.update(authenticator=_authenticator(login), auth_required=True, auth_require_tls=tls is not None)
        if tls is not None and implicit_tls:
            options["ssl_context"] = tls
        elif tls is not None:
            options.update(tls_context=tls, require_starttls=True)
        self.controller = Controller(self.recorder, **options)

    def __enter__(self) -> MailServer:
        self.controller.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.controller.stop()

    @property
    def messages(self) -> list[tuple[list[str], Message]]:
        """Return the accepted messages, oldest first."""
        return list(self.recorder.messages)

    def wait_for(self, recipient: str, *, seconds: float = 30) -> Message:
        """Return the first message to recipient, waiting up to seconds for it (then fail loudly)."""
        deadline = time.monotonic() + seconds
        with self.recorder.arrived:
            while True:
                for recipients, message in self.recorder.messages:
                    if recipient in recipients:
                        return message
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no mail to {recipient} arrived; got {len(self.recorder.messages)}")
                self.recorder.arrived.wait(left)


def _authenticator(login: tuple[str, str]) -> Any:
    """Return an aiosmtpd authenticator accepting exactly one user and password."""

    def authenticate(server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> AuthResult:
        ok = isinstance(data, LoginPassword) and (data.login.decode(), data.password.decode()) == login
        return AuthResult(success=ok, handled=False)

    return authenticate


def self_signed(directory: Path) -> tuple[ssl.SSLContext, Path]:
    """Write a self-signed certificate for 127.0.0.1; return the server's TLS context and the certificate path."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
                   .not_valid_after(now + dt.timedelta(days=1))
                   .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                                  critical=False)
                   .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                   .sign(key, hashes.SHA256()))
    cert_path, key_path = directory / "smtp-cert.pem", directory / "smtp-key.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    return context, cert_path
