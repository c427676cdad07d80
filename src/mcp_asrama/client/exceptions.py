"""What can go wrong when asking the data service. Messages carry no upstream body and no secret.

AsramaError
├── ServiceUnavailable   the service could not be reached (refused, DNS, network)
├── ServiceTimeout       it did not answer within ASRAMA_API_TIMEOUT
├── ServiceAuthError     401/403: our ASRAMA_API_TOKEN was refused
├── NotFound             404: no such record (or no such route on that service)
├── ServiceRejected      another 4xx: the service refused the request as malformed
│   └── Conflict         409: it conflicts with what is stored (an overlapping izin, one already ended)
│       └── Changed      409 marked `berubah`: a record changed since the caller read the old values it sent
├── ServiceError         5xx: the service failed
├── BadResponse          the answer was not the JSON shape the contract promises
└── NoMultiFilter        several values were sent for one filter, and the service did not say it honours them

`for_status` names the error an HTTP status stands for.
"""

from collections.abc import Mapping

from mcp_asrama.contract import BERUBAH, KONFLIK_HEADER


class AsramaError(Exception):
    """Base of every data-service failure; `status` is the HTTP status when there was one."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ServiceUnavailable(AsramaError):
    """The service could not be reached."""


class ServiceTimeout(AsramaError):
    """The service did not answer in time."""


class ServiceAuthError(AsramaError):
    """The service refused our token."""


class NotFound(AsramaError):
    """The record (or the route) does not exist."""


class ServiceRejected(AsramaError):
    """The service answered 4xx other than 401/403/404."""


class Conflict(ServiceRejected):
    """The service answered 409: the write conflicts with what is stored."""


class Changed(Conflict):
    """The service answered 409 with `X-Asrama-Konflik: berubah`: a record is no longer what the write said it
    read, and nothing was written."""


class ServiceError(AsramaError):
    """The service answered 5xx."""


class BadResponse(AsramaError):
    """The service's answer does not follow the contract."""


class NoMultiFilter(AsramaError):
    """Several values were sent for `kelas` or `kamar` and the answer lacks our service's `filter-ganda` mark: a
    service of the tutorial's contract would have used one of them. Ask one value at a time instead."""


def for_status(status: int, headers: Mapping[str, str]) -> AsramaError:
    """The error an answer other than 200/201 stands for."""
    if status == 409 and headers.get(KONFLIK_HEADER) == BERUBAH:
        return Changed("a record changed since it was read (HTTP 409)", status=status)
    if status in (401, 403):
        return ServiceAuthError(f"service refused the token (HTTP {status})", status=status)
    if status == 404:
        return NotFound("not found (HTTP 404)", status=status)
    if status == 409:
        return Conflict("conflicts with what is stored (HTTP 409)", status=status)
    if status < 400:  # the contract never redirects: a redirect means ASRAMA_API_URL points at something else
        return BadResponse(f"service redirected (HTTP {status})", status=status)
    if status < 500:
        return ServiceRejected(f"service rejected the request (HTTP {status})", status=status)
    return ServiceError(f"service failed (HTTP {status})", status=status)
