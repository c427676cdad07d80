"""`--auth sekolah` assembled from the settings: the provider the SDK's auth routes call, the sign-in pages, the SDK's
auth settings, and the HTTP client to the data service they share (closed with the server's lifespan)."""

from typing import Any

from limits import RateLimitItemPerHour
from limits.aio.strategies import MovingWindowRateLimiter
from mcp.server.auth.routes import build_metadata
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.shared.auth import ProtectedResourceMetadata
from pydantic import AnyHttpUrl
from starlette.responses import JSONResponse
from starlette.routing import Router
from starlette.types import ASGIApp, Receive, Scope, Send

from mcp_asrama.client import AsramaClient, make_http_client
from mcp_asrama.config import is_loopback, origin_of
from mcp_asrama.contract.oauth_state import person_family
from mcp_asrama.server.features.write import Konfirmasi
from mcp_asrama.server.guard.audit import Auditor
from mcp_asrama.server.guard.limits_storage import LimitsStorage
from mcp_asrama.server.sekolah.client_documents import ClientDocuments
from mcp_asrama.server.sekolah.keys import KeyRing
from mcp_asrama.server.sekolah.oidc import OidcLogin
from mcp_asrama.server.sekolah.pages import Pages
from mcp_asrama.server.sekolah.provider import SekolahProvider
from mcp_asrama.server.sekolah.sessions import Sessions
from mcp_asrama.server.sekolah.staff import SCOPES
from mcp_asrama.server.sekolah.store import SharedState
from mcp_asrama.server.sekolah.usulan_pages import UsulanPages
from mcp_asrama.server.settings import ServerSettings

CALLBACK_PATH = "/login/callback"
REGISTRATIONS = RateLimitItemPerHour(100)  # registrations per address per hour (claude.ai's come from few addresses)
TOO_MANY = JSONResponse(
    {"error": "invalid_client_metadata", "error_description": "too many registrations from this address; try later"},
    status_code=429,
    headers={"Retry-After": "600", "Cache-Control": "no-store"},
)


class Authority:
    """The school's authorization server of one MCP server process."""

    def __init__(self, settings: ServerSettings) -> None:
        assert settings.public_url is not None  # ServerSettings requires it with ASRAMA_AUTH=sekolah
        self.settings, self.public_url = settings, settings.public_url
        self.base = origin_of(settings.public_url)
        self.issuer = f"{self.base}/"  # the SDK's form of an issuer without a path (trailing slash)
        self.resource = str(settings.public_url)
        self._http = make_http_client(settings.base_url, token=settings.token, timeout=settings.api_timeout)
        directory = AsramaClient(self._http)
        state = SharedState(directory)
        self.provider = SekolahProvider(
            issuer=self.issuer,
            resource=self.resource,
            base_url=self.base,
            state=state,
            ring=KeyRing(state),
            directory=directory,
            # A server on loopback (a trial on one machine) may read documents served on loopback.
            documents=ClientDocuments(allow_loopback=is_loopback(self.public_url.host or "")),
            scope_claim=settings.auth_scope_claim,
            access_ttl=settings.access_token_seconds,
            refresh_ttl=settings.refresh_token_days * 86400,
        )
        self.decisions: UsulanPages | None = None  # the usulan page, once the server's confirmations exist
        self._limits = LimitsStorage(settings.rate_limit_storage)
        self._login = self._oidc()
        secure = settings.public_url.scheme == "https" or not is_loopback(settings.public_url.host or "")
        self.sessions = Sessions(state, secure=secure, family=lambda email: f"{person_family(email)}.sesi")
        self.pages = Pages(
            self.provider,
            self.sessions,
            self._login,
            MovingWindowRateLimiter(self._limits.storage),
            self._documents(),
        )

    def _oidc(self) -> OidcLogin | None:
        settings = self.settings
        if settings.login_oidc_issuer is None:
            return None
        assert settings.login_oidc_client_id is not None  # ServerSettings requires it with an issuer
        secret = settings.login_oidc_client_secret
        return OidcLogin(
            issuer=str(settings.login_oidc_issuer).rstrip("/"),
            client_id=settings.login_oidc_client_id,
            client_secret=secret.get_secret_value() if secret else None,
            callback_url=self.base + CALLBACK_PATH,
            domains=settings.login_domains,
        )

    def auth_settings(self) -> AuthSettings:
        return AuthSettings(
            issuer_url=AnyHttpUrl(self.issuer),
            resource_server_url=AnyHttpUrl(self.resource),
            required_scopes=[self.settings.auth_required_scope],
            client_registration_options=self._registration(),
            revocation_options=RevocationOptions(enabled=True),
            validate_token_resource=True,
        )

    @staticmethod
    def _registration() -> ClientRegistrationOptions:
        return ClientRegistrationOptions(enabled=True, valid_scopes=SCOPES, default_scopes=SCOPES)

    def _documents(self) -> dict[str, dict[str, Any]]:
        """The authorization server metadata (the SDK's, with `jwks_uri` and what else we do) and the Protected
        Resource Metadata (listing `asrama:write` too, so that a client asks for it)."""
        metadata = build_metadata(AnyHttpUrl(self.issuer), None, self._registration(), RevocationOptions(enabled=True))
        server = metadata.model_dump(mode="json", exclude_none=True)
        server["jwks_uri"] = f"{self.base}/jwks.json"
        server["authorization_response_iss_parameter_supported"] = True
        server["client_id_metadata_document_supported"] = True
        for methods in ("token_endpoint_auth_methods_supported", "revocation_endpoint_auth_methods_supported"):
            server[methods] = ["none", *server[methods]]
        resource = ProtectedResourceMetadata(
            resource=AnyHttpUrl(self.resource), authorization_servers=[AnyHttpUrl(self.issuer)], scopes_supported=SCOPES
        )
        path = "/.well-known/oauth-protected-resource" + (self.public_url.path or "").rstrip("/")
        return {
            "/.well-known/oauth-authorization-server": server,
            path: resource.model_dump(mode="json", exclude_none=True),
        }

    def decide_on_pages(self, book: Konfirmasi, auditor: Auditor | None) -> None:
        """Serve `/usulan/<id>` for `book`'s usulan (channel `halaman`), linked from the write's result."""
        book.alamat = self.base
        self.decisions = UsulanPages(book, self.provider, self.sessions, auditor)

    def wrap(self, app: ASGIApp) -> ASGIApp:
        """`app` behind the sign-in's routes (which answer their paths; everything else, the lifespan included,
        goes on to `app`: a Router would keep the lifespan to itself)."""
        routes = [*self.pages.routes(), *(self.decisions.routes() if self.decisions else [])]
        router = Router(routes=routes, default=app)

        async def sign_in_first(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "http" and scope["path"] == "/register" and scope["method"] == "POST":
                address = scope["client"][0] if scope.get("client") else "?"
                if not await self.pages.limiter.hit(REGISTRATIONS, "asrama-register", address):
                    await TOO_MANY(scope, receive, send)  # open registration must not fill the database
                    return
            await (router if scope["type"] == "http" else app)(scope, receive, send)

        return sign_in_first

    async def aclose(self) -> None:
        await self._http.aclose()
        await self.provider.documents.aclose()
        if self._login is not None:
            await self._login.aclose()
        self._limits.close()
