"""A stand-in identity provider on 127.0.0.1: RSA signing keys, a JWKS endpoint shaped like Keycloak's, and
access tokens minted on demand. Used by the tests, and runnable to try an authenticated server by hand:

    .venv/bin/python -m tests.auth.idp --port 8090 --audience http://127.0.0.1:8001/mcp \
        --scope-claim '["kamar:Al-Fatih 1"]'

prints the issuer, the JWKS URL and a token, then serves the JWKS until Ctrl+C (the keys live only as long as
the process). No network beyond 127.0.0.1.
"""

import argparse
import base64
import contextlib
import hashlib
import hmac
import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

REALM_PATH = "/realms/sekolah"
JWKS_PATH = f"{REALM_PATH}/protocol/openid-connect/certs"


def new_rsa_key(bits: int = 2048) -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=bits)


def public_pem(key: rsa.RSAPrivateKey) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unsigned(header: dict[str, Any], claims: dict[str, Any]) -> str:
    """`header.payload.` with an empty signature (what `alg: none` looks like)."""
    return f"{b64url(json.dumps(header).encode())}.{b64url(json.dumps(claims).encode())}."


def hmac_signed(header: dict[str, Any], claims: dict[str, Any], secret: bytes) -> str:
    """A token MAC'ed with `secret` (the attack: HS256 keyed with the server's public key)."""
    signing_input = f"{b64url(json.dumps(header).encode())}.{b64url(json.dumps(claims).encode())}"
    mac = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{b64url(mac)}"


class Idp:
    """The identity provider: `keys` by kid, the kids it publishes, and how often its JWKS was fetched."""

    def __init__(self, port: int = 0) -> None:
        self.keys: dict[str, rsa.RSAPrivateKey] = {}
        self.published: list[str] = []
        self.jwks_requests = 0
        self.delay = 0.0  # seconds the JWKS endpoint takes to answer (a slow IdP)
        self._lock = threading.Lock()
        idp = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path != JWKS_PATH:
                    self.send_error(404)
                    return
                time.sleep(idp.delay)
                with idp._lock:
                    idp.jwks_requests += 1
                    body = json.dumps(idp.jwks()).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._http = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._http.daemon_threads = True
        self._thread = threading.Thread(target=self._http.serve_forever, args=(0.05,), name="idp", daemon=True)
        self._stopped = False
        self.port = int(self._http.server_address[1])
        self.issuer = f"http://127.0.0.1:{self.port}{REALM_PATH}"
        self.jwks_url = f"http://127.0.0.1:{self.port}{JWKS_PATH}"

    def __enter__(self) -> "Idp":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop answering (the JWKS URL refuses connections from now on)."""
        if not self._stopped:
            self._stopped = True
            self._http.shutdown()
            self._http.server_close()
            self._thread.join(timeout=5)

    def add_key(self, kid: str, *, publish: bool = True, key: rsa.RSAPrivateKey | None = None) -> rsa.RSAPrivateKey:
        with self._lock:
            self.keys[kid] = key or new_rsa_key()
            if publish:
                self.published.append(kid)
            return self.keys[kid]

    def publish(self, kid: str) -> None:
        with self._lock:
            self.published.append(kid)

    def jwks(self) -> dict[str, Any]:
        keys = []
        for kid in self.published:
            jwk = RSAAlgorithm.to_jwk(self.keys[kid].public_key(), as_dict=True)
            keys.append({**jwk, "kid": kid, "use": "sig", "alg": "RS256"})
        return {"keys": keys}

    def claims(self, audience: str | list[str], **overrides: Any) -> dict[str, Any]:
        """An access token's claims as Keycloak shapes them, with `overrides` (a value of None drops the claim)."""
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "sub": "f3c1a9e0-ust-ridwan",
            "aud": audience,
            "azp": "claude-desktop",
            "iat": now,
            "nbf": now,
            "exp": now + 300,
            "jti": str(uuid.uuid4()),
            "scope": "openid asrama:read",
            "preferred_username": "ust.ridwan",
            "asrama_scope": ["all"],
        }
        claims.update(overrides)
        return {k: v for k, v in claims.items() if v is not None}

    def mint(
        self,
        audience: str | list[str],
        *,
        kid: str = "k1",
        alg: str = "RS256",
        key: rsa.RSAPrivateKey | None = None,
        **overrides: Any,
    ) -> str:
        """A signed access token for `audience` (the MCP server's public URL)."""
        signer = key or self.keys[kid]
        return jwt.encode(self.claims(audience, **overrides), signer, algorithm=alg, headers={"kid": kid})


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.auth.idp", description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8090)
    parser.add_argument("--audience", required=True, help="the MCP server's public URL (ASRAMA_PUBLIC_URL)")
    parser.add_argument("--scope-claim", default='["all"]', help='asrama_scope claim, JSON (default ["all"])')
    parser.add_argument("--sub", default="f3c1a9e0-ust-ridwan")
    parser.add_argument("--lifetime", type=int, default=3600, help="token lifetime in seconds")
    args = parser.parse_args()
    with Idp(args.port) as idp:
        idp.add_key("k1")
        now = int(time.time())
        token = idp.mint(
            args.audience, sub=args.sub, asrama_scope=json.loads(args.scope_claim), exp=now + args.lifetime
        )
        print(f"issuer:   {idp.issuer}\njwks_url: {idp.jwks_url}\ntoken:    {token}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
