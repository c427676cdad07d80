"""The sign-in's routes: the login page (the school's provider and/or a local account), the provider's callback,
the consent page, and the documents a client reads first (authorization server metadata with `jwks_uri`, the
Protected Resource Metadata listing `asrama:write`, the JWKS), served ahead of the SDK's own two documents.

`/authorize` (the SDK's) sends the browser to `/masuk?permintaan=<id>`; after sign-in `/izin` shows what the
person's record grants and, on "Izinkan", sends the browser back to the client with a code (and `iss`, RFC 9207).
Whoever is not an active staff member is told so, and no code is ever made for them.
"""

import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

from limits import RateLimitItemPerMinute
from limits.aio.strategies import MovingWindowRateLimiter
from mcp.server.auth.provider import construct_redirect_uri
from mcp.server.auth.routes import cors_middleware
from pydantic import TypeAdapter, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from mcp_asrama.client.exceptions import AsramaError
from mcp_asrama.contract.pengurus import Email
from mcp_asrama.server.sekolah import pages_html as html
from mcp_asrama.server.sekolah.oidc import LoginRefused, OidcLogin
from mcp_asrama.server.sekolah.provider import PENDING_TTL, SekolahProvider
from mcp_asrama.server.sekolah.sessions import Session, Sessions, same
from mcp_asrama.server.sekolah.staff import describe, grant

log = logging.getLogger(__name__)

NOT_STAFF = "Akun ini belum terdaftar sebagai pengurus; hubungi admin asrama."
EXPIRED = "Permintaan masuk ini sudah kedaluwarsa atau tidak dikenal. Ulangi dari aplikasi Anda."
REFUSED = {
    "dibatalkan": "Masuk dibatalkan.",
    "kedaluwarsa": EXPIRED,
    "tidak_sah": "Jawaban penyedia akun tidak sah. Ulangi dari aplikasi Anda.",
    "domain": "Akun ini bukan akun sekolah yang diizinkan.",
    "email_belum_terverifikasi": "Email akun ini belum terverifikasi oleh penyedia akun.",
    "penyedia_gagal": "Penyedia akun sekolah tidak dapat dihubungi. Coba lagi nanti.",
}
LOGIN_TRIES = RateLimitItemPerMinute(30)  # password attempts per address per minute (per account: the service)
EMAIL = TypeAdapter(Email)
LANJUT = re.compile(r"/usulan/[A-Za-z0-9_\-]{16,64}")  # the only place a sign-in may continue to besides /izin


@dataclass(frozen=True)
class Target:
    """What a sign-in is for: the form's hidden fields, where the browser goes once signed in, what is asked."""

    hidden: dict[str, str]
    after: str
    asked: str


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


class Pages:
    """The routes of one server's sign-in."""

    def __init__(
        self,
        provider: SekolahProvider,
        sessions: Sessions,
        oidc: OidcLogin | None,
        limiter: MovingWindowRateLimiter,
        documents: dict[str, dict[str, Any]],
    ) -> None:
        self.provider, self.sessions, self.oidc, self.limiter = provider, sessions, oidc, limiter
        self.documents = documents  # path -> JSON document (the two metadata documents)

    def routes(self) -> list[Route]:
        routes = [
            Route("/masuk", self.masuk, methods=["GET", "POST"]),
            Route("/masuk/sekolah", self.masuk_sekolah, methods=["GET"]),
            Route("/login/callback", self.callback, methods=["GET"]),
            Route("/izin", self.izin, methods=["GET", "POST"]),
            Route("/jwks.json", cors_middleware(self.jwks, ["GET", "OPTIONS"]), methods=["GET", "OPTIONS"]),
        ]
        for path, document in self.documents.items():
            routes.append(
                Route(path, cors_middleware(_answering(document), ["GET", "OPTIONS"]), methods=["GET", "OPTIONS"])
            )
        return routes

    async def _pending(self, permintaan: str | None) -> dict[str, Any] | None:
        if not permintaan or len(permintaan) > 100:
            return None
        return await self.provider.state.get("permintaan", permintaan)

    async def _target(self, source: Mapping[str, Any]) -> Target | None:
        """What a sign-in is for: a client's authorization request (`permintaan`) or an usulan's page (`lanjut`)."""
        permintaan = str(source.get("permintaan") or "")
        if permintaan:
            pending = await self._pending(permintaan)
            if pending is None:
                return None
            return Target({"permintaan": permintaan}, f"/izin?permintaan={quote(permintaan)}", pending["client_name"])
        lanjut = str(source.get("lanjut") or "")
        return Target({"lanjut": lanjut}, lanjut, "persetujuan pencatatan") if LANJUT.fullmatch(lanjut) else None

    def _login(self, request: Request, target: Target, status: int = 200, **say: str) -> Response:
        token = self.sessions.form_token(request)
        page = html.login(
            hidden=target.hidden, csrf=token, client_name=target.asked, local=True, oidc=self.oidc is not None, **say
        )
        page.status_code = status
        self.sessions.keep_form(page, token)
        return page

    async def masuk(self, request: Request) -> Response:
        form = await request.form() if request.method == "POST" else None
        target = await self._target(form if form is not None else request.query_params)
        if target is None:
            return html.message("Masuk", EXPIRED, status=400)
        if form is None:
            if await self.sessions.current(request) is not None:
                return RedirectResponse(target.after, status_code=303)
            return self._login(request, target)
        if not self.sessions.form_ok(request, str(form.get("csrf") or "")):
            return html.message("Masuk", "Formulir tidak sah. Muat ulang halaman masuk, lalu coba lagi.", status=403)
        address = request.client.host if request.client else "?"
        if not await self.limiter.hit(LOGIN_TRIES, "asrama-masuk", address):
            say = "Terlalu banyak percobaan dari alamat ini. Coba lagi beberapa menit lagi."
            return self._login(request, target, 429, pesan=say)
        try:
            email = EMAIL.validate_python(str(form.get("email") or ""))
        except ValidationError:
            return self._login(request, target, 401, pesan="Email atau sandi salah.")
        try:
            hasil = await self.provider.directory.pengurus_masuk(email, str(form.get("sandi") or "")[:1024] or " ")
        except AsramaError:
            return html.message("Masuk", "Layanan data asrama tidak dapat dihubungi. Coba lagi nanti.", status=503)
        log.info("local sign-in", extra={"event": "login", "outcome": hasil.hasil})
        if hasil.hasil == "ok":
            response = RedirectResponse(target.after, status_code=303)
            await self.sessions.start(response, email)
            return response
        if hasil.hasil == "terkunci":
            minutes = max(1, -(-(hasil.coba_lagi_detik or 60) // 60))
            say = f"Akun ini dikunci sementara karena terlalu banyak percobaan. Coba lagi dalam {minutes} menit."
            return self._login(request, target, 403, pesan=say, email=email)
        if hasil.hasil == "nonaktif":
            return html.message("Tidak bisa masuk", NOT_STAFF, status=403)
        return self._login(request, target, 401, pesan="Email atau sandi salah.", email=email)

    async def masuk_sekolah(self, request: Request) -> Response:
        if self.oidc is None:
            return html.message("Masuk", "Masuk dengan akun sekolah tidak diaktifkan di server ini.", status=404)
        target = await self._target(request.query_params)
        if target is None:
            return html.message("Masuk", EXPIRED, status=400)
        try:
            url, pending = await self.oidc.begin()
        except LoginRefused as refused:
            return html.message("Masuk", REFUSED.get(refused.reason, EXPIRED), status=502)
        await self.provider.state.put("oidc", pending["state"], {**pending, "lanjut": target.after}, ttl=PENDING_TTL)
        return RedirectResponse(url, status_code=303)

    async def callback(self, request: Request) -> Response:
        sent = request.query_params.get("state")
        taken = await self.provider.state.take("oidc", sent) if self.oidc and sent and len(sent) <= 200 else None
        if taken is None or self.oidc is None:
            return html.message("Masuk", EXPIRED, status=400)
        try:
            email = await self.oidc.finish(taken, request.query_params)
        except LoginRefused as refused:
            log.info("school sign-in refused", extra={"event": "login", "outcome": refused.reason})
            status = 502 if refused.reason == "penyedia_gagal" else 403
            return html.message("Tidak bisa masuk", REFUSED.get(refused.reason, EXPIRED), status=status)
        if await self.provider.staff(email) is None:  # no session at all for whoever is not on the list
            log.info("sign-in refused: not on the staff list", extra={"event": "login", "outcome": "bukan_pengurus"})
            return html.message("Tidak bisa masuk", NOT_STAFF, status=403)
        log.info("school sign-in", extra={"event": "login", "outcome": "ok"})
        response = RedirectResponse(taken["lanjut"], status_code=303)  # a path of ours, stored at the start
        await self.sessions.start(response, email)
        return response

    async def izin(self, request: Request) -> Response:
        form = await request.form() if request.method == "POST" else None
        source = form if form is not None else request.query_params
        permintaan = str(source.get("permintaan") or "")
        session = await self.sessions.current(request)
        if session is None:
            if form is not None:
                return html.message("Izin akses", "Sesi tidak sah atau sudah berakhir. Masuk lagi.", status=403)
            return RedirectResponse(f"/masuk?permintaan={quote(permintaan)}", status_code=303)
        if form is not None and not same(session.csrf, str(form.get("csrf") or "")):
            return html.message("Izin akses", "Formulir tidak sah. Ulangi dari aplikasi Anda.", status=403)
        pending = await (self.provider.state.take if form is not None else self.provider.state.get)(
            "permintaan", permintaan
        )
        if pending is None:
            return html.message("Izin akses", EXPIRED, status=400)
        staff = await self.provider.staff(session.email)
        if staff is None:
            log.info("sign-in refused: not on the staff list", extra={"event": "login", "outcome": "bukan_pengurus"})
            return html.message("Tidak bisa masuk", NOT_STAFF, status=403)
        if form is None:
            lines = describe(staff, grant(staff, pending["scopes"]).scopes)
            return html.consent(
                permintaan=permintaan,
                csrf=session.csrf,
                client_name=pending["client_name"],
                lines=lines,
                email=session.email,
                form_to=_origin(pending["redirect_uri"]),
            )
        return await self._decided(session, pending, form.get("keputusan") == "izinkan")

    async def _decided(self, session: Session, pending: dict[str, Any], allowed: bool) -> Response:
        back = {"state": pending["state"], "iss": self.provider.issuer}
        if allowed:
            url = construct_redirect_uri(
                pending["redirect_uri"], code=await self.provider.new_code(pending, session.email), **back
            )
        else:
            url = construct_redirect_uri(pending["redirect_uri"], error="access_denied", **back)
        log.info("consent", extra={"event": "consent", "outcome": "izinkan" if allowed else "tolak"})
        return RedirectResponse(url, status_code=303, headers={"Cache-Control": "no-store"})

    async def jwks(self, _request: Request) -> Response:
        return _public_json(await self.provider.ring.jwks())


def _answering(document: dict[str, Any]) -> Callable[[Request], Response]:
    return lambda _request: _public_json(document)


def _public_json(document: dict[str, Any]) -> Response:
    return JSONResponse(document, headers={"Cache-Control": "public, max-age=300"})
