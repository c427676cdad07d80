"""The client of the school's REST data service (ours or theirs, following the tutorial's contract)."""

from mcp_asrama.client.client import AsramaClient, make_http_client
from mcp_asrama.client.exceptions import (
    AsramaError,
    BadResponse,
    Changed,
    Conflict,
    NoMultiFilter,
    NotFound,
    ServiceAuthError,
    ServiceError,
    ServiceRejected,
    ServiceTimeout,
    ServiceUnavailable,
)

__all__ = [
    "AsramaClient",
    "AsramaError",
    "BadResponse",
    "Changed",
    "Conflict",
    "NoMultiFilter",
    "NotFound",
    "ServiceAuthError",
    "ServiceError",
    "ServiceRejected",
    "ServiceTimeout",
    "ServiceUnavailable",
    "make_http_client",
]
