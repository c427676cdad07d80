"""Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, MCP 2025-11-25 authorization): a host
whose `client_id` is an https URL is described by the JSON document at that URL. `ClientDocuments.client` fetches it
(public addresses only, no redirects, size cap, deadlines), checks it, and caches the result, failures briefly."""

import contextlib
import ipaddress
import json
import logging
import re
import socket
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

import anyio
import httpx2
from mcp.shared.auth import OAuthClientInformationFull
from pydantic import AnyHttpUrl, ValidationError

log = logging.getLogger(__name__)

FAILURE_TTL = 30.0  # a bad URL is fetched at most once per this many seconds
MIN_TTL = 60.0  # a document's Cache-Control max-age below this counts as this
MAX_ENTRIES = 1024  # cached URLs kept; the oldest go first
MAX_URL_LENGTH = 2048
MAX_ADDRESSES = 4  # resolved addresses tried, in order, when one refuses the connection
GRANT_TYPES = ("authorization_code", "refresh_token")
URL_CHARACTERS = re.compile(r"[!#-;=?-\[\]_a-z~]+")  # printable ASCII without space " < > \ ^ ` { | }
SCOPE = re.compile(r"[!#-\[\]-~]+( [!#-\[\]-~]+)*")  # RFC 6749 3.3 scope-tokens, one space apart
MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*\"?(\d+)\"?\s*(?:,|$)", re.IGNORECASE)


class Refused(Exception):
    """Why a document is not used (its text goes to the log: never the document's body)."""


@dataclass(frozen=True)
class _Entry:
    expires: float
    client: OAuthClientInformationFull | None


class ClientDocuments:
    """Resolves `client_id` URLs into public clients; one per authorization server (close with `aclose`)."""

    def __init__(
        self,
        *,
        timeout: float = 5.0,
        max_bytes: int = 64 * 1024,
        ttl: float = 3600.0,
        verify: ssl.SSLContext | str | bool = True,
        allow_loopback: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._timeout, self._max_bytes, self._ttl = timeout, max_bytes, ttl
        self._allow_loopback, self._clock = allow_loopback, clock
        self._cache: dict[str, _Entry] = {}
        self._pending: dict[str, anyio.Event] = {}
        # No keep-alive: a connection is opened for one verified host name, never reused for another on that address.
        # No proxy from the environment (it would connect instead of the checked address), but its trusted
        # certificates (SSL_CERT_FILE / SSL_CERT_DIR) stay trusted: trust_env=False alone would drop them.
        self._http = httpx2.AsyncClient(
            headers={"Accept": "application/json", "User-Agent": "mcp-asrama"},
            timeout=httpx2.Timeout(timeout),
            limits=httpx2.Limits(max_connections=20, max_keepalive_connections=0),
            verify=httpx2.create_ssl_context() if verify is True else verify,
            follow_redirects=False,
            trust_env=False,
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    @staticmethod
    def is_document_url(client_id: str) -> bool:
        """An https URL with a host and a path other than "/", without fragment, credentials or dot segments."""
        if len(client_id) > MAX_URL_LENGTH or not URL_CHARACTERS.fullmatch(client_id) or "#" in client_id:
            return False
        if not client_id.startswith("https://"):
            return False
        parts = urlsplit(client_id)
        try:
            _ = parts.port  # a port out of range raises
        except ValueError:
            return False
        if not parts.hostname or "@" in parts.netloc or parts.path in ("", "/"):
            return False
        return all(unquote(segment) not in (".", "..") for segment in parts.path.split("/"))

    async def client(self, client_id: str) -> OAuthClientInformationFull | None:
        """The public client `client_id` describes, or None (not a document URL, unreachable, too large, invalid)."""
        if not self.is_document_url(client_id):
            return None
        while True:
            entry = self._cache.get(client_id)
            if entry is not None and entry.expires > self._clock():
                return entry.client
            pending = self._pending.get(client_id)
            if pending is None:
                break
            await pending.wait()  # one fetch per URL at a time: the others read its result
        done = self._pending[client_id] = anyio.Event()
        try:
            try:
                # httpx2 times each phase out itself (a cancelled TLS handshake would leave its socket to the GC);
                # the overall deadline stops a server that trickles its answer.
                with anyio.fail_after(2 * self._timeout):
                    found, lifetime = await self._fetch(client_id)
            except (Refused, TimeoutError, httpx2.HTTPError, httpx2.InvalidURL, OSError, ValueError) as error:
                reason = str(error) if isinstance(error, Refused) else type(error).__name__
                log.warning("client metadata document refused", extra={"client_id": client_id, "reason": reason})
                found, lifetime = None, FAILURE_TTL
            self._remember(client_id, _Entry(self._clock() + lifetime, found))
            return found
        finally:
            del self._pending[client_id]
            done.set()

    def _remember(self, client_id: str, entry: _Entry) -> None:
        self._cache.pop(client_id, None)
        if len(self._cache) >= MAX_ENTRIES:
            now = self._clock()
            for key in [key for key, old in self._cache.items() if old.expires <= now]:
                del self._cache[key]
            while len(self._cache) >= MAX_ENTRIES:
                del self._cache[next(iter(self._cache))]
        self._cache[client_id] = entry

    async def _fetch(self, url: str) -> tuple[OAuthClientInformationFull, float]:
        """GET the document from a checked address of its host: (the client, how long to keep it)."""
        parts = urlsplit(url)
        host, port = parts.hostname or "", parts.port or 443
        addresses = await self._addresses(host, port)
        literal = _ip(host) is not None
        for number, address in enumerate(addresses[:MAX_ADDRESSES], start=1):
            # The request goes to the address just checked (no second lookup to rebind); the Host header and the
            # certificate check (SNI) still name the URL's host.
            pinned = httpx2.URL(url).copy_with(host=address)
            request = self._http.build_request(
                "GET",
                pinned,
                headers={"Host": parts.netloc},
                extensions={} if literal else {"sni_hostname": host},
            )
            try:
                response = await self._http.send(request, stream=True)
            except httpx2.ConnectError:
                if number == min(len(addresses), MAX_ADDRESSES):
                    raise
                continue
            try:
                return _parse(url, await self._body(response)), self._lifetime(response)
            finally:
                await response.aclose()
        raise Refused("no address")

    async def _addresses(self, host: str, port: int) -> list[str]:
        """The host's addresses, all of them allowed, or Refused."""
        found = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        addresses = list(dict.fromkeys(str(info[4][0]) for info in found))
        for address in addresses:
            ip = _ip(address)
            if ip is None or not ((ip.is_loopback and self._allow_loopback) or (ip.is_global and not ip.is_multicast)):
                raise Refused("address not public")
        if not addresses:
            raise Refused("no address")
        return addresses

    async def _body(self, response: httpx2.Response) -> bytes:
        if response.status_code != 200:
            raise Refused(f"status {response.status_code}")  # a redirect too: never followed
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > self._max_bytes:
            raise Refused("too large")
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > self._max_bytes:
                raise Refused("too large")
        return bytes(body)

    def _lifetime(self, response: httpx2.Response) -> float:
        """`ttl`, shortened by the response's Cache-Control max-age (counted as at least MIN_TTL)."""
        cache_control = ",".join(response.headers.get_list("Cache-Control"))
        max_age = MAX_AGE.search(cache_control)
        if max_age is None:
            return self._ttl
        return min(self._ttl, max(float(max_age.group(1)), MIN_TTL))


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address `text` names (an IPv4-mapped IPv6 address as its IPv4 one), or None for a name."""
    try:
        ip = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None
    return ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped else ip


def _parse(url: str, body: bytes) -> OAuthClientInformationFull:
    """The public client a document describes, or Refused."""
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):  # not UTF-8 or not JSON; nested too deep
        raise Refused("not JSON") from None
    if not isinstance(document, dict):
        raise Refused("not a JSON object")
    if document.get("client_id") != url:
        raise Refused("client_id is not the document's URL")
    if "client_secret" in document or "client_secret_expires_at" in document:
        raise Refused("a client secret")
    if document.get("token_endpoint_auth_method", "none") != "none":
        raise Refused("not a public client")
    redirect_uris = document.get("redirect_uris")
    if not isinstance(redirect_uris, list) or not redirect_uris:
        raise Refused("no redirect_uris")
    if not all(isinstance(uri, str) and URL_CHARACTERS.fullmatch(uri) and "#" not in uri for uri in redirect_uris):
        raise Refused("a redirect URI is invalid")
    grant_types = document.get("grant_types", list(GRANT_TYPES))
    if not isinstance(grant_types, list) or not grant_types or not all(grant in GRANT_TYPES for grant in grant_types):
        raise Refused("grant_types")
    if document.get("response_types", ["code"]) != ["code"]:
        raise Refused("response_types")
    try:
        return OAuthClientInformationFull(
            client_id=url,
            token_endpoint_auth_method="none",  # noqa: S106 (a method's name, no secret)
            redirect_uris=redirect_uris,
            grant_types=grant_types,
            response_types=["code"],
            **_optional(document),
        )
    except ValidationError:
        raise Refused("a redirect URI is invalid") from None


def _optional(document: dict[str, Any]) -> dict[str, Any]:
    """client_name, client_uri, logo_uri and scope where they are valid; the rest is dropped."""
    kept: dict[str, Any] = {}
    name = document.get("client_name")
    if isinstance(name, str) and 0 < len(name) <= 200 and name.isprintable():
        kept["client_name"] = name
    for field in ("client_uri", "logo_uri"):
        value = document.get(field)
        if isinstance(value, str) and value.startswith("https://") and URL_CHARACTERS.fullmatch(value):
            with contextlib.suppress(ValidationError):
                kept[field] = AnyHttpUrl(value)
    scope = document.get("scope")
    if isinstance(scope, str) and len(scope) <= 1000 and SCOPE.fullmatch(scope):
        kept["scope"] = scope
    return kept
