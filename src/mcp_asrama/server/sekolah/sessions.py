"""A signed-in person's browser session, and the forms' CSRF tokens.

The session cookie holds only a random id (256 bits); what it stands for (the email, the form token, when it
began) is in the shared state under the id's hash, so a forged or stale cookie finds nothing, and every replica
knows every session. The cookie is `HttpOnly; SameSite=Lax`, `Secure` with the `__Host-` prefix except on a
loopback (http) URL. Before sign-in, the login form's token is a second cookie that the form must repeat (double
submit); a cross-site POST carries neither (SameSite) and a foreign Origin is refused by the gate anyway.
"""

import secrets
import time
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from mcp_asrama.server.sekolah.store import SharedState

KIND = "sesi"
SESSION_TTL = 12 * 3600


@dataclass(frozen=True)
class Session:
    id: str
    email: str
    csrf: str
    since: float


def same(a: str | None, b: str | None) -> bool:
    """Whether two tokens are present and equal (in constant time)."""
    return bool(a) and bool(b) and secrets.compare_digest(str(a), str(b))


class Sessions:
    """Sessions kept in the shared state; `secure` on an https public URL."""

    def __init__(self, state: SharedState, *, secure: bool, family: Any) -> None:
        self.state = state
        self.secure = secure
        self.family = family  # the family of a person's sessions (ended with their tokens)
        prefix = "__Host-" if secure else ""
        self.cookie, self.form_cookie = f"{prefix}asrama_sesi", f"{prefix}asrama_form"

    def _set(self, response: Response, name: str, value: str, max_age: int) -> None:
        response.set_cookie(name, value, max_age=max_age, path="/", secure=self.secure, httponly=True, samesite="lax")

    async def start(self, response: Response, email: str) -> None:
        """Sign `email` in on this browser."""
        sid = secrets.token_urlsafe(32)
        value = {"email": email, "csrf": secrets.token_urlsafe(24), "since": time.time()}
        await self.state.put(KIND, sid, value, ttl=SESSION_TTL, family=self.family(email))
        self._set(response, self.cookie, sid, SESSION_TTL)
        response.delete_cookie(self.form_cookie, path="/", secure=self.secure, httponly=True, samesite="lax")

    async def current(self, request: Request) -> Session | None:
        """The session of this browser, or None (no cookie, or one that names nothing live)."""
        sid = request.cookies.get(self.cookie)
        if not sid or len(sid) > 100:
            return None
        found = await self.state.get(KIND, sid)
        return None if found is None else Session(sid, found["email"], found["csrf"], found["since"])

    def form_token(self, request: Request) -> str:
        """The login form's token: this browser's, or a new one (`keep_form` sets it on the page)."""
        token = request.cookies.get(self.form_cookie)
        return token if token and len(token) <= 100 else secrets.token_urlsafe(24)

    def keep_form(self, response: Response, token: str) -> None:
        self._set(response, self.form_cookie, token, 3600)

    def form_ok(self, request: Request, sent: str | None) -> bool:
        """Whether a login form repeats this browser's form token."""
        return same(request.cookies.get(self.form_cookie), sent)
