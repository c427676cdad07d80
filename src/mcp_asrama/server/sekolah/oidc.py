"""The person's sign-in at the school's own OpenID provider (Google Workspace, Entra ID, Keycloak, ...): the
authorization code flow with PKCE (S256), state and nonce; the ID token verified against the provider's JWKS;
who signed in is the verified email, case-folded, of an allowed domain.

    begin()  -> (URL at the provider, pending)        the caller keeps pending server-side, keyed by its state
    finish(pending, callback query) -> email         or LoginRefused(reason)

Protocol pieces are Authlib's (claims checks) and joserfc's (signatures); HTTP is httpx2 with a timeout, no
redirects and a size cap. Tokens and emails are never logged."""

import base64
import hmac
import json
import logging
import ssl
import time
from collections.abc import Mapping, Sequence
from typing import Any, Literal
from urllib.parse import quote

import httpx2
from authlib.common.security import generate_token  # type: ignore[import-untyped]
from authlib.common.urls import add_params_to_uri  # type: ignore[import-untyped]
from authlib.oauth2.rfc7636 import create_s256_code_challenge  # type: ignore[import-untyped]
from authlib.oidc.core import CodeIDToken  # type: ignore[import-untyped]
from joserfc import jwt
from joserfc.errors import InvalidKeyIdError, JoseError
from joserfc.jwk import KeySet
from joserfc.jws import JWSRegistry

Reason = Literal["dibatalkan", "kedaluwarsa", "tidak_sah", "domain", "email_belum_terverifikasi", "penyedia_gagal"]

SCOPE = "openid email profile"
PENDING_TTL = 600  # seconds a sign-in may take between begin and finish
LEEWAY = 60  # seconds of clock skew allowed on exp / iat / nbf
MAX_BODY = 256 * 1024  # bytes: no discovery document, JWKS, token or userinfo answer is larger
ASYMMETRIC = {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"}

log = logging.getLogger(__name__)


class LoginRefused(Exception):
    """Why a sign-in at the school's provider gave no person; `reason` is one of: "dibatalkan" (the person or
    provider cancelled / error param), "kedaluwarsa" (state unknown or too old), "tidak_sah" (state/nonce/ID token
    checks failed), "domain" (email domain not allowed), "email_belum_terverifikasi", "penyedia_gagal" (provider
    unreachable / bad answer)."""

    def __init__(self, reason: Reason) -> None:
        super().__init__(reason)
        self.reason: Reason = reason


class OidcLogin:
    """One school's OpenID provider as the login of our authorization server. Holds one pooled HTTP client
    (close it with `aclose`), the discovery document and the JWKS, both fetched once and cached (the JWKS again
    once when an ID token names an unknown key)."""

    def __init__(
        self,
        *,
        issuer: str,
        client_id: str,
        client_secret: str | None,
        callback_url: str,
        domains: Sequence[str] = (),
        timeout: float = 10.0,
        verify: ssl.SSLContext | str | bool = True,
    ) -> None:
        self.issuer, self.client_id, self.client_secret = issuer, client_id, client_secret
        self.callback_url = callback_url
        self.domains = {d.strip().lstrip("@").casefold() for d in domains if d.strip()}
        tls = ssl.create_default_context(cafile=verify) if isinstance(verify, str) else verify
        self._http = httpx2.AsyncClient(
            timeout=httpx2.Timeout(timeout),
            verify=tls,
            follow_redirects=False,
            headers={"Accept": "application/json", "User-Agent": "mcp-asrama"},
        )
        self._metadata: dict[str, Any] | None = None
        self._keys: KeySet | None = None

    async def aclose(self) -> None:
        await self._http.aclose()

    async def begin(self) -> tuple[str, dict[str, str]]:
        """(URL to send the browser to at the provider, pending) — pending is a JSON-able dict (state, nonce,
        code_verifier, created) the caller keeps server-side keyed by pending["state"] and passes to finish."""
        metadata = await self._discovery()
        pending = {
            "state": generate_token(32),  # 32 of 62 characters: ~190 bits
            "nonce": generate_token(32),
            "code_verifier": generate_token(64),
            "created": str(int(time.time())),
        }
        params = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": self.callback_url,
            "scope": SCOPE,
            "state": pending["state"],
            "nonce": pending["nonce"],
            "code_challenge": create_s256_code_challenge(pending["code_verifier"]),
            "code_challenge_method": "S256",
        }
        return add_params_to_uri(metadata["authorization_endpoint"], params), pending

    async def finish(self, pending: dict[str, str], query: Mapping[str, str]) -> str:
        """The verified, case-folded email of who signed in; raises LoginRefused."""
        try:
            state, nonce, verifier, created = (pending[k] for k in ("state", "nonce", "code_verifier", "created"))
            age = time.time() - int(created)
        except (KeyError, TypeError, ValueError):
            raise _refused("kedaluwarsa", "pending sign-in incomplete") from None
        if not hmac.compare_digest(query.get("state", "").encode(), state.encode()):
            raise _refused("tidak_sah", "state does not match")
        if not 0 <= age <= PENDING_TTL:
            raise _refused("kedaluwarsa", "pending sign-in too old")
        if "iss" in query and query["iss"] != self.issuer:  # RFC 9207: mix-up defence
            raise _refused("tidak_sah", "authorization response from another issuer")
        if "error" in query:
            raise _refused("dibatalkan", "provider answered an error")
        if not query.get("code"):
            raise _refused("tidak_sah", "no code in the authorization response")
        tokens = await self._tokens(query["code"], verifier)
        claims = await self._id_token(tokens, nonce)
        if "email" not in claims and "access_token" in tokens:
            claims = await self._userinfo(tokens["access_token"], claims["sub"])
        return self._email(claims)

    async def _discovery(self) -> dict[str, Any]:
        if self._metadata is None:
            url = self.issuer.rstrip("/") + "/.well-known/openid-configuration"
            metadata = await self._get_json(url)
            if metadata.get("issuer") != self.issuer:
                raise _refused("penyedia_gagal", "discovery document names another issuer")
            for name in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
                if not isinstance(metadata.get(name), str):
                    raise _refused("penyedia_gagal", f"discovery document without {name}")
            self._metadata = metadata
        return self._metadata

    async def _tokens(self, code: str, verifier: str) -> dict[str, Any]:
        metadata = await self._discovery()
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": self.callback_url}
        form["code_verifier"] = verifier
        headers: dict[str, str] = {}
        methods = metadata.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]  # spec default
        if self.client_secret is None:
            form["client_id"] = self.client_id
        elif "client_secret_basic" in methods:
            pair = f"{quote(self.client_id, safe='')}:{quote(self.client_secret, safe='')}"  # RFC 6749 2.3.1
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        elif "client_secret_post" in methods:
            form |= {"client_id": self.client_id, "client_secret": self.client_secret}
        else:
            raise _refused("penyedia_gagal", "provider offers no client authentication we use")
        status, body = await self._send("POST", metadata["token_endpoint"], data=form, headers=headers)
        if status == 400 and body and body.get("error") == "invalid_grant":
            raise _refused("tidak_sah", "code refused (used, expired or PKCE mismatch)")
        if status != 200 or body is None or not isinstance(body.get("id_token"), str):
            raise _refused("penyedia_gagal", f"token endpoint answered {status}")
        return body

    async def _id_token(self, tokens: dict[str, Any], nonce: str) -> dict[str, Any]:
        metadata = await self._discovery()
        supported = metadata.get("id_token_signing_alg_values_supported")
        algorithms = [a for a in supported if a in ASYMMETRIC] if isinstance(supported, list) else []
        registry = JWSRegistry(algorithms=algorithms or ["RS256"], strict_check_header=False)  # never none nor HS*
        try:
            try:
                token = jwt.decode(tokens["id_token"], await self._key_set(), registry=registry)
            except InvalidKeyIdError:  # the provider rotated its keys: fetch them again, once
                token = jwt.decode(tokens["id_token"], await self._key_set(refresh=True), registry=registry)
            options = {"iss": {"essential": True, "value": self.issuer}}
            options["aud"] = {"essential": True, "value": self.client_id}
            params = {"nonce": nonce, "client_id": self.client_id, "access_token": tokens.get("access_token")}
            claims = CodeIDToken(token.claims, token.header, options, params)
            claims.validate(leeway=LEEWAY)  # iss, aud, exp, iat, nbf, nonce, azp, at_hash
        except (JoseError, ValueError, TypeError) as exc:
            raise _refused("tidak_sah", f"ID token refused ({type(exc).__name__})") from None
        return dict(claims)

    async def _key_set(self, *, refresh: bool = False) -> KeySet:
        if self._keys is None or refresh:
            jwks = await self._get_json((await self._discovery())["jwks_uri"])
            try:
                self._keys = KeySet.import_key_set(jwks)  # type: ignore[arg-type]
            except (JoseError, ValueError, TypeError, KeyError):
                raise _refused("penyedia_gagal", "JWKS unreadable") from None
        return self._keys

    async def _userinfo(self, access_token: str, subject: str) -> dict[str, Any]:
        endpoint = (await self._discovery()).get("userinfo_endpoint")
        if not isinstance(endpoint, str):
            raise _refused("penyedia_gagal", "no email in the ID token and no userinfo endpoint")
        claims = await self._get_json(endpoint, headers={"Authorization": f"Bearer {access_token}"})
        if claims.get("sub") != subject:  # OpenID Connect Core 5.3.2: else the answer may be someone else's
            raise _refused("tidak_sah", "userinfo names another subject")
        return claims

    def _email(self, claims: dict[str, Any]) -> str:
        email = claims.get("email")
        if not isinstance(email, str) or email.count("@") != 1 or not all(email.split("@")):
            raise _refused("penyedia_gagal", "the provider gave no usable email")
        # Absent email_verified is accepted: Entra ID omits it (its emails are the tenant's own).
        if claims.get("email_verified") in (False, "false"):
            raise _refused("email_belum_terverifikasi", "email not verified at the provider")
        email = email.casefold()
        if self.domains and email.split("@")[1] not in self.domains:
            raise _refused("domain", "email domain not allowed")
        return email

    async def _get_json(self, url: str, headers: Mapping[str, str] | None = None) -> dict[str, Any]:
        status, body = await self._send("GET", url, headers=headers)
        if status != 200 or body is None:
            raise _refused("penyedia_gagal", f"provider answered {status}")
        return body

    async def _send(self, method: str, url: str, **kwargs: Any) -> tuple[int, dict[str, Any] | None]:
        """The status and the JSON object answered (None if the body is not one); refused (penyedia_gagal) when
        unreachable or beyond MAX_BODY bytes."""
        try:
            async with self._http.stream(method, url, **kwargs) as response:
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > MAX_BODY:
                        raise _refused("penyedia_gagal", "provider answer too large")
        except httpx2.HTTPError:
            raise _refused("penyedia_gagal", "provider unreachable") from None
        try:
            parsed = json.loads(body)
        except ValueError:
            return response.status_code, None
        return response.status_code, parsed if isinstance(parsed, dict) else None


def _refused(reason: Reason, why: str) -> LoginRefused:
    """The refusal, logged with `why` (never a token or an email)."""
    log.warning("sign-in at the school's provider refused: %s (%s)", reason, why)
    return LoginRefused(reason)
