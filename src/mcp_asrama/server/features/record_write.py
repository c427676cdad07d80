"""What a write of one student's dated record shares (a violation, a deposit, a clinic visit, an achievement): the
student it may be written for, the plan's student and day, the result that names the student, and the body the
service takes."""

from dataclasses import dataclass
from datetime import date
from typing import Any, TypeVar

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, create_model

from mcp_asrama.client.models import Anak
from mcp_asrama.contract.types import Rekaman, Strict
from mcp_asrama.server.features.anak import satu_anak
from mcp_asrama.server.features.common import NO_ACCESS
from mcp_asrama.server.features.write import Ditulis, HasilTulis, Tulis
from mcp_asrama.server.guard.scoped import ScopedReader

Body = TypeVar("Body", bound=Strict)
Made = TypeVar("Made", bound=Rekaman)


async def writable_student(reader: ScopedReader, id_anak: str) -> Anak:
    """The student a record may be written for: one in the caller's room/class scope (a role alone writes for
    nobody), or the tool error that says why not."""
    if reader.akses.kosong:
        raise ToolError(NO_ACCESS)
    return await satu_anak(reader, id_anak)


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

    @classmethod
    def ditulis(cls, made: Rekaman, pesan: str, change: dict[str, Any], **row: Any) -> Ditulis:
        """`made` written: this result naming its student, with `row` (the record as its output row), and the change
        the audit keeps (the student, then `change`: what was added, ids only)."""
        written = cls(hasil="ditulis", pesan=pesan, id_anak=made.id_anak, **row)
        return written, [{"id": made.id_anak, "old": None, **change}]


def hasil_catat(name: str, what: str, field: str, row: type[BaseModel]) -> type[HasilCatat]:
    """The result model `name` of a write of `what` (e.g. "a violation"): `HasilCatat` with the record written as
    `field`, an output row `row`."""
    doc = f"What happened to {what}: written (with the record), declined, cancelled, or waiting (an usulan)."
    fields: dict[str, Any] = {field: (row | None, None)}
    return create_model(name, __base__=HasilCatat, __doc__=doc, __module__=row.__module__, **fields)


async def created(tulis: Tulis, domain: str, model: type[Made], body: Strict) -> Made:
    """`body` recorded once in the dated `domain` (under the write's key, by its actor), as `model`."""
    return await tulis.reader.client.create(domain, model, body, actor=tulis.actor, key=tulis.key)
