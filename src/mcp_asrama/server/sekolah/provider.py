"""The school's authorization server behind the SDK's OAuth routes (`OAuthAuthorizationServerProvider`).

- clients: registered dynamically (RFC 7591, kept in the shared state) or named by a client ID metadata document
  (`client_documents`); either may ask for what `scopes_supported` lists;
- `/authorize` (PKCE S256 only, checked by the SDK) leads the browser to our sign-in page (`pages`), which stores
  a code bound to the person, the client, the redirect URI, the PKCE challenge and this resource (RFC 8707);
- a code is used once: a second use finds it gone, and revokes what its first use produced;
- access tokens are RFC 9068 JWTs signed by the key ring, `access_ttl` seconds long; each carries its family
  (`sid`), which must still exist when it is verified (checked at most `recheck` seconds apart), so revoking a
  family ends its access tokens too;
- refresh tokens are opaque, rotated at every use; a used one presented again (a theft, or a race lost) revokes
  its whole family; every issue and refresh reads the staff record again (scope, `menulis`, `aktif`).
"""

import logging
import re
import secrets
import time
from typing import Any

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    RefreshToken,
    TokenError,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from mcp_asrama.client import AsramaClient
from mcp_asrama.client.exceptions import NotFound
from mcp_asrama.contract.oauth_state import person_family
from mcp_asrama.contract.pengurus import Pengurus
from mcp_asrama.server.guard.auth import JwtVerifier
from mcp_asrama.server.guard.token_cache import CachingVerifier
from mcp_asrama.server.sekolah.client_documents import ClientDocuments
from mcp_asrama.server.sekolah.keys import KeyRing
from mcp_asrama.server.sekolah.staff import SCOPES, grant
from mcp_asrama.server.sekolah.store import SharedState

log = logging.getLogger(__name__)

CHALLENGE = re.compile(r"[A-Za-z0-9_-]{43}")  # base64url of a SHA-256, unpadded

PENDING_TTL = 600  # seconds a sign-in may take, from /authorize to the consent
CODE_TTL = 120  # seconds an authorization code lives
UNUSED_CLIENT_TTL = 86400  # a dynamically registered client no one has signed in with is kept a day ...
CLIENT_TTL = 365 * 86400  # ... and a year from each sign-in that used it


class Segar(RefreshToken):
    """A refresh token and the family it belongs to."""

    family: str


def family_of(subject: str) -> str:
    """A new family id; its prefix names the person, so that all of a person's families can be ended at once."""
    return f"{person_family(subject)}.{secrets.token_urlsafe(12)}"


def same_resource(a: str, b: str) -> bool:
    return a.rstrip("/") == b.rstrip("/")


class SekolahProvider:
    """The provider the SDK's auth routes call; `verifier` is what /mcp checks bearer tokens with."""

    def __init__(
        self,
        *,
        issuer: str,
        resource: str,
        base_url: str,
        state: SharedState,
        ring: KeyRing,
        directory: AsramaClient,
        documents: ClientDocuments,
        scope_claim: str,
        access_ttl: int = 600,
        refresh_ttl: int = 30 * 86400,
        recheck: float = 15.0,
    ) -> None:
        self.issuer, self.resource, self.base_url = issuer, resource, base_url.rstrip("/")
        self.state, self.ring, self.directory, self.documents = state, ring, directory, documents
        self.scope_claim, self.access_ttl, self.refresh_ttl = scope_claim, access_ttl, refresh_ttl
        self.jwt = JwtVerifier(issuer=issuer, resource=resource, keys=ring)
        self.verifier = CachingVerifier(self.check, max_age=recheck)

    # --- clients ------------------------------------------------------------------------------------------------

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        if ClientDocuments.is_document_url(client_id):
            client = await self.documents.client(client_id)
        else:
            stored = await self.state.get("klien", client_id)
            client = None if stored is None else OAuthClientInformationFull.model_validate(stored)
        if client is not None and client.scope is None:
            client = client.model_copy(update={"scope": " ".join(SCOPES)})
        return client

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None  # the SDK's registration handler names every client it registers
        value = client_info.model_dump(mode="json", exclude_none=True)
        await self.state.put("klien", client_info.client_id, value, ttl=UNUSED_CLIENT_TTL)

    # --- authorization ------------------------------------------------------------------------------------------

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        """Keep the request and send the browser to our sign-in page."""
        if params.resource is not None and not same_resource(params.resource, self.resource):
            raise AuthorizeError("invalid_target", "this server issues tokens for its own /mcp only")
        if not CHALLENGE.fullmatch(params.code_challenge):  # the SDK takes any string, even an empty one
            raise AuthorizeError("invalid_request", "code_challenge must be an S256 challenge (RFC 7636)")
        permintaan = secrets.token_urlsafe(24)
        pending = {
            "client_id": client.client_id,
            "client_name": client.client_name or client.client_id,
            "redirect_uri": str(params.redirect_uri),
            "explicit": params.redirect_uri_provided_explicitly,
            "code_challenge": params.code_challenge,
            "state": params.state,
            "scopes": params.scopes,
        }
        await self.state.put("permintaan", permintaan, pending, ttl=PENDING_TTL)
        return f"{self.base_url}/masuk?permintaan={permintaan}"

    async def new_code(self, pending: dict[str, Any], subject: str) -> str:
        """A code for `pending`, bound to the person who consented (called by the consent page)."""
        code = secrets.token_urlsafe(32)
        await self.state.put(
            "kode", code, {**pending, "subject": subject, "expires_at": time.time() + CODE_TTL}, CODE_TTL
        )
        return code

    async def load_authorization_code(self, client: OAuthClientInformationFull, authorization_code: str) -> Any:
        stored = await self.state.get("kode", authorization_code)
        if stored is None:
            used = await self.state.get("kode_pakai", authorization_code)
            if used is not None:  # a code replayed: what its first use produced goes too (RFC 6749 §4.1.2)
                log.warning("authorization code replayed; its tokens revoked", extra={"event": "code_replayed"})
                await self.state.drop_family(used["family"])
            return None
        return AuthorizationCode(
            code=authorization_code,
            scopes=stored["scopes"] or [],
            expires_at=stored["expires_at"],
            client_id=stored["client_id"],
            code_challenge=stored["code_challenge"],
            redirect_uri=stored["redirect_uri"],
            redirect_uri_provided_explicitly=stored["explicit"],
            resource=self.resource,
            subject=stored["subject"],
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        taken = await self.state.take("kode", authorization_code.code)
        if taken is None:
            raise TokenError("invalid_grant", "authorization code already used")
        assert authorization_code.subject is not None  # every code we store names its person
        family = family_of(authorization_code.subject)
        if client.client_id is not None and not ClientDocuments.is_document_url(client.client_id):
            kept = client.model_dump(mode="json", exclude_none=True)
            await self.state.put("klien", client.client_id, kept, ttl=CLIENT_TTL)  # in use: kept a year
        await self.state.put("kode_pakai", authorization_code.code, {"family": family}, ttl=PENDING_TTL, family=family)
        return await self._issue(client, authorization_code.subject, taken["scopes"], family)

    # --- refresh ------------------------------------------------------------------------------------------------

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> Segar | None:
        stored = await self.state.get("segar", refresh_token)
        if stored is None:
            used = await self.state.get("segar_bekas", refresh_token)
            if used is not None:
                log.warning("refresh token reused; its family revoked", extra={"event": "refresh_reused"})
                await self.state.drop_family(used["family"])
            return None
        return Segar(
            token=refresh_token,
            client_id=stored["client_id"],
            scopes=stored["scopes"] or [],
            expires_at=int(stored["expires_at"]),
            resource=self.resource,
            subject=stored["subject"],
            family=stored["family"],
        )

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: Segar, scopes: list[str]
    ) -> OAuthToken:
        taken = await self.state.take("segar", refresh_token.token)
        if taken is None:  # used meanwhile by someone else: the same as a reuse
            await self.state.drop_family(refresh_token.family)
            raise TokenError("invalid_grant", "refresh token already used")
        used = {"family": refresh_token.family}
        await self.state.put(
            "segar_bekas", refresh_token.token, used, ttl=self.refresh_ttl, family=refresh_token.family
        )
        assert refresh_token.subject is not None  # every refresh token we store names its person
        return await self._issue(client, refresh_token.subject, scopes, refresh_token.family)

    # --- tokens -------------------------------------------------------------------------------------------------

    async def staff(self, email: str) -> Pengurus | None:
        """The active staff record of `email`, or None (not on the list, or deactivated)."""
        try:
            found = await self.directory.pengurus(email)
        except NotFound:
            return None
        return found if found.aktif else None

    async def _issue(
        self, client: OAuthClientInformationFull, subject: str, requested: list[str] | None, family: str
    ) -> OAuthToken:
        staff = await self.staff(subject)
        if staff is None:
            await self.state.drop_family(family)
            raise TokenError("invalid_grant", "the account is not an active staff member")
        granted = grant(staff, requested)
        now = int(time.time())
        access = await self.ring.sign(
            {
                "iss": self.issuer,
                "aud": self.resource,
                "sub": subject,
                "client_id": client.client_id,
                "iat": now,
                "exp": now + self.access_ttl,
                "jti": secrets.token_urlsafe(16),
                "scope": " ".join(granted.scopes),
                "sid": family,
                self.scope_claim: granted.claim,
            }
        )
        refresh = secrets.token_urlsafe(32)
        await self.state.put("keluarga", family, {"subject": subject}, ttl=self.refresh_ttl, family=family)
        stored = {
            "client_id": client.client_id,
            "subject": subject,
            "scopes": requested,
            "family": family,
            "expires_at": now + self.refresh_ttl,
        }
        await self.state.put("segar", refresh, stored, ttl=self.refresh_ttl, family=family)
        return OAuthToken(
            access_token=access,
            token_type="Bearer",  # noqa: S106 (the token type's name, not a secret)
            expires_in=self.access_ttl,
            scope=" ".join(granted.scopes),
            refresh_token=refresh,
        )

    async def check(self, token: str) -> tuple[AccessToken | None, str]:
        """A bearer token's access info when it is ours, for this resource, unexpired, and its family lives."""
        access, reason = await self.jwt.check(token)
        if access is None:
            return None, reason
        family = (access.claims or {}).get("sid")
        if not isinstance(family, str) or await self.state.get("keluarga", family) is None:
            return None, "revoked"
        return access, ""

    async def load_access_token(self, token: str) -> AccessToken | None:
        return await self.verifier.verify_token(token)

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        if isinstance(token, Segar):
            family: object = token.family
        else:
            family = (token.claims or {}).get("sid") if isinstance(token, AccessToken) else None
        if isinstance(family, str):
            await self.state.drop_family(family)
