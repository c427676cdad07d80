"""A host's client ID metadata document served over HTTPS on 127.0.0.1 (the URL is the client_id), with a
self-signed certificate for 127.0.0.1 that the provider's Node trusts through NODE_EXTRA_CA_CERTS."""

import datetime
import ipaddress
import json
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

DOCUMENT_PATH = "/asrama-host/client.json"


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for IP 127.0.0.1 that is its own CA, and its key: (cert file, key file)."""
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
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "cimd-cert.pem", folder / "cimd-key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_file, key_file


@contextmanager
def metadata_document(cert: tuple[Path, Path], metadata: dict[str, Any]) -> Iterator[tuple[str, list[str]]]:
    """Serve `metadata` plus its own URL as client_id at https://127.0.0.1:<free port>/asrama-host/client.json;
    yields that URL and the list of paths fetched (to tell the provider read it)."""
    fetched: list[str] = []
    holder: dict[str, bytes] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            fetched.append(self.path)
            if self.path != DOCUMENT_PATH:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(holder["body"])))
            self.end_headers()
            self.wfile.write(holder["body"])

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the test reads `fetched`, not stderr

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*cert)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    url = f"https://127.0.0.1:{server.server_address[1]}{DOCUMENT_PATH}"
    holder["body"] = json.dumps({**metadata, "client_id": url}).encode()
    thread = threading.Thread(target=server.serve_forever, name="client-metadata", daemon=True)
    thread.start()
    try:
        yield url, fetched
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
