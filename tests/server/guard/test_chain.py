"""The guard chain as `chain.install` assembles it: every step present, in the order `guard/__init__` draws."""

from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from mcp.server.request_state import RequestStateBoundary
from mcp.server.transport_security import RequestBodyLimitMiddleware

from mcp_asrama.runtime.http_guard import HostOriginGate
from mcp_asrama.server import guard
from mcp_asrama.server.app import build_server
from mcp_asrama.server.asrama_server import AsramaServer
from mcp_asrama.server.guard.audit import Auditor
from mcp_asrama.server.guard.confirm import Claimed, noted
from mcp_asrama.server.response_mode import ResponseMode
from mcp_asrama.server.routing_headers import RoutingHeaderCheck
from mcp_asrama.server.settings import ServerSettings
from mcp_asrama.server.transport import HealthAndPost, http_app


def public_key(folder: Path) -> Path:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key()
    path = folder / "idp.pem"
    path.write_bytes(key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    return path


@pytest.fixture
def shared(tmp_path: Path) -> ServerSettings:
    """A shared server: HTTP with bearer tokens (so rate-limited) and an audit log."""
    return ServerSettings(
        transport="http",
        mcp_host="0.0.0.0",  # noqa: S104 - a shared server's bind, never opened here
        auth="jwt",
        auth_issuer="https://idp.example",
        auth_public_key_file=public_key(tmp_path),
        public_url="https://asrama.example/mcp",
        audit_log=tmp_path / "audit.jsonl",
        api_token="t",
    )


def names(middleware: list[Any]) -> list[str]:
    return [getattr(m, "__name__", type(m).__name__) for m in middleware]


def test_the_mcp_middleware_runs_in_the_drawn_order(shared: ServerSettings) -> None:
    chain = build_server(shared).middleware
    assert names(chain) == [
        "OpenTelemetryMiddleware",
        "rate_limit",  # 6
        "Auditor",  # 7
        "gate_listen",  # 8
        "only_what_is_sent",
        "every_served_version",
        "noted",  # 9
        "RequestStateBoundary",  # 10
        "Claimed",  # 11
    ]
    assert isinstance(chain[2], Auditor) and chain[6] is noted
    assert isinstance(chain[7], RequestStateBoundary) and isinstance(chain[8], Claimed)


def test_the_local_operator_is_neither_limited_nor_audited_without_a_log() -> None:
    chain = build_server(ServerSettings(api_token="t")).middleware
    assert names(chain)[:2] == ["OpenTelemetryMiddleware", "gate_listen"]
    assert names(chain)[-3:] == ["noted", "RequestStateBoundary", "Claimed"]


def test_the_http_half_wraps_the_sdk_app_in_the_drawn_order(shared: ServerSettings) -> None:
    layers: list[type] = []
    app: Any = http_app(build_server(shared), shared)
    while not isinstance(app, ResponseMode):
        layers.append(type(app))
        app = app.app
    assert [layer.__name__ for layer in layers] == [
        HostOriginGate.__name__,  # 1
        HealthAndPost.__name__,
        RequestBodyLimitMiddleware.__name__,  # 2
        RoutingHeaderCheck.__name__,  # 3
        "_HttpRateLimit",  # 4 (5, the bearer, is inside the SDK's app)
    ]


def test_a_server_without_the_chain_serves_no_http_and_no_tool_that_needs_anything() -> None:
    server = AsramaServer("bare")
    with pytest.raises(RuntimeError, match="guard chain is not installed"):
        server.guard_http(ResponseMode(None, None), lambda app: app)  # type: ignore[arg-type]
    assert server.permits(frozenset()) is True
    assert server.permits(frozenset({"writes"})) is False
    assert server.permits(frozenset({"clinic"})) is False


def test_the_drawing_names_every_step() -> None:
    drawing = guard.__doc__ or ""
    for step in ("HostOriginGate", "RequestBodyLimitMiddleware", "RoutingHeaderCheck", "ratelimit.wrap_http",
                 "bearer", "ratelimit.middleware", "audit.Auditor", "confirm.noted", "RequestStateBoundary",
                 "confirm.Claimed", "permits", "disclose"):  # fmt: skip
        assert step in drawing, step
    assert "chain.install" in drawing
