"""What a write of one student's dated record shares (a violation, a deposit, a clinic visit): the plan's student and
day, the result that names the student, and the body the service takes."""

from dataclasses import dataclass
from datetime import date
from typing import TypeVar

from mcp_asrama.client.models import Anak
from mcp_asrama.contract.types import Strict
from mcp_asrama.server.features.write import HasilTulis

Body = TypeVar("Body", bound=Strict)


@dataclass(frozen=True)
class RencanaCatatan:
    """A new record of one student on one day, as it will be written (a domain adds its own fields)."""

    anak: Anak
    tanggal: date

    def badan(self, shape: type[Body], *names: str, **fields: object) -> Body:
        """The service's body, of the contract's `shape`: the student, the day, then the plan's fields `names` and
        `fields`, each that is set (not None, not empty)."""
        given = {**{name: getattr(self, name) for name in names}, **fields}
        chosen = {k: v for k, v in given.items() if v not in (None, "")}
        return shape.model_validate({"id_anak": self.anak.id, "tanggal": self.tanggal, **chosen})


class HasilCatat(HasilTulis):
    """What happened to a new record: written (with the record), declined, cancelled, or waiting (an usulan)."""

    id_anak: str | None = None
