"""The WSGI plumbing the board caches share: the types, and calling the app while keeping its whole answer."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

StartResponse = Callable[..., Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


def call_app(app: WsgiApp, environ: dict[str, Any], start_response: StartResponse) -> tuple[str, list[tuple[str, str]],
                                                                                             bytes]:
    """Call app as the server would (its start_response passed on) and return its status, headers and whole body."""
    captured: dict[str, Any] = {}

    def capture(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        captured.update(status=status, headers=headers)
        return start_response(status, headers, exc_info) if exc_info else start_response(status, headers)

    result = app(environ, capture)
    try:
        body = b"".join(result)
    finally:
        close = getattr(result, "close", None)
        if close is not None:
            close()
    return captured.get("status", ""), captured.get("headers", []), body
