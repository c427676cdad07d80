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
"""


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
