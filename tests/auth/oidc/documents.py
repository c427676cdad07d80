"""A host's client ID metadata document served over HTTPS on 127.0.0.1 (the URL is the client_id), with a
self-signed certificate for 127.0.0.1 that the provider's Node trusts through NODE_EXTRA_CA_CERTS; `https_server`
serves any replies (statuses, headers, bodies) on several paths."""

import datetime
import ipaddress
import json
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

DOCUMENT_PATH = "/asrama-host/client.json"


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for IP 127.0.0.1 (and the name localhost) that is its own CA, and its key: (cert, key file)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=2))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]),
            False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "cimd-cert.pem", folder / "cimd-key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_file, key_file


@dataclass
class Reply:
    """What the server answers on one path: a status, headers and a body (Content-Length sent unless `length` is
    False: then the body ends when the connection closes)."""

    body: bytes = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "application/json"})
    length: bool = True


@contextmanager
def https_server(cert: tuple[Path, Path], replies: dict[str, Reply]) -> Iterator[tuple[str, list[str]]]:
    """Serve `replies` (path -> Reply, read at each request: fill it once the base URL is known) over HTTPS at
    https://127.0.0.1:<free port>; yields that base URL and the list of paths fetched (404 for any other path)."""
    fetched: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            fetched.append(self.path)
            reply = replies.get(self.path)
            if reply is None:
                self.send_error(404)
                return
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            if reply.length:
                self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the test reads `fetched`, not stderr

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*cert)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), name="https-documents", daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}", fetched
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@contextmanager
def metadata_document(cert: tuple[Path, Path], metadata: dict[str, Any]) -> Iterator[tuple[str, list[str]]]:
    """Serve `metadata` plus its own URL as client_id at https://127.0.0.1:<free port>/asrama-host/client.json;
    yields that URL and the list of paths fetched (to tell the provider read it)."""
    replies: dict[str, Reply] = {}
    with https_server(cert, replies) as (base, fetched):
        url = base + DOCUMENT_PATH
        replies[DOCUMENT_PATH] = Reply(json.dumps({**metadata, "client_id": url}).encode())
        yield url, fetched
