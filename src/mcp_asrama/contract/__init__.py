"""What crosses the HTTP line between the data service and its clients, written once; imports neither side.

- `headers`: what the service declares about itself (features, conflicts).
- `domains`: the list of domains (name, route, feed kind, import kinds, resource URI) every list is derived from.
- `types`: the field types both sides share, `Strict` (a write body) and `Shape` (what a client keeps of an answer).
- one module per domain (`anak` with rooms and classes, `absensi`, `izin`, `pelanggaran`, `hafalan`, `kesehatan`,
  `perubahan`): its write bodies (`...In`, validated: the service takes them as they are) and the shapes a client
  keeps (unknown fields dropped: the allowlist). The service's response schemas extend these shapes with what only
  it returns (a note, who recorded, personal data); `tests/data/openapi.json` pins the service's wire.
"""

from mcp_asrama.contract.domains import BY_NAME, DOMAINS, FEED_KINDS, IMPORT_KINDS, Domain, FeedKind
from mcp_asrama.contract.headers import BERUBAH, FILTER_GANDA, FITUR, FITUR_HEADER, KONFLIK_HEADER, NILAI_LAMA

__all__ = [
    "BERUBAH",
    "BY_NAME",
    "DOMAINS",
    "FEED_KINDS",
    "FILTER_GANDA",
    "FITUR",
    "FITUR_HEADER",
    "IMPORT_KINDS",
    "KONFLIK_HEADER",
    "NILAI_LAMA",
    "Domain",
    "FeedKind",
]
