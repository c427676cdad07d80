"""The kit for a dated record of one student (a violation, a deposit, a visit, an izin), used by every such domain:

- the list route's query: `RecordFilterDep` (id_anak, kelas, kamar, dari, sampai) and `PagingDep` (limit, offset);
- `search`: the records of a filter, joined with their student, counted, one page latest first
  (`crud.common.page` for any filters and order);
- `add`: a new record with its handle, student, actor and time, stored with its change-feed event;
- `create`: the idempotent POST (lock the student, replay, 404 for an unknown student, write, commit the answer);
- `create_as_sent` and `listing`: the POST and the list of a domain whose own columns are its body's fields;
- `public`: the answer, the record's columns beside the `student`'s name, class and room.

A domain keeps only its own columns, its rekap and its special routes.
"""

import secrets
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime
from typing import Annotated, Any, TypeVar, cast

from fastapi import Depends, HTTPException, Request
from pydantic import BaseModel
from sqlalchemy import ColumnElement
from sqlalchemy.orm import Session

from mcp_asrama.contract import FeedKind
from mcp_asrama.service import idempotensi
from mcp_asrama.service.crud import anak as crud_anak
from mcp_asrama.service.crud import common as crud_common
from mcp_asrama.service.crud import perubahan
from mcp_asrama.service.crud.anak import FilterValues, dated_filters
from mcp_asrama.service.crud.common import Join, Paging
from mcp_asrama.service.models import Anak
from mcp_asrama.service.models.base import StudentRecord
from mcp_asrama.service.routes.common import (
    Dari,
    Filter,
    IdAnakFilter,
    Limit,
    Offset,
    Sampai,
    check_not_future,
    check_period,
)

ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"description": "Anak tidak ditemukan"},
    409: {"description": "Idempotency-Key dipakai untuk permintaan lain"},
}
"""The documented refusals of a create (and of a route that names a student)."""

Shape = TypeVar("Shape", bound=BaseModel)
Page = TypeVar("Page", bound=BaseModel)
Record = TypeVar("Record", bound=StudentRecord)


@dataclass(frozen=True)
class RecordFilter:
    """Which records a list asks for: a student, classes, rooms (any of them) and a period."""

    id_anak: str | None = None
    kelas: FilterValues = None
    kamar: FilterValues = None
    dari: date | None = None
    sampai: date | None = None


def record_filter(
    id_anak: IdAnakFilter = None, kelas: Filter = None, kamar: Filter = None, dari: Dari = None, sampai: Sampai = None
) -> RecordFilter:
    """The list route's filters, as query parameters (the period is checked by `search`)."""
    return RecordFilter(id_anak=id_anak, kelas=kelas, kamar=kamar, dari=dari, sampai=sampai)


def paging(limit: Limit = 100, offset: Offset = 0) -> Paging:
    """One page of a list, as query parameters."""
    return Paging(limit=limit, offset=offset)


RecordFilterDep = Annotated[RecordFilter, Depends(record_filter)]
PagingDep = Annotated[Paging, Depends(paging)]


def search(
    session: Session,
    model: type[StudentRecord],
    where: RecordFilter,
    paging: Paging,
    *,
    also: Iterable[ColumnElement[bool]] = (),
    extra: Sequence[Any] = (),
    joins: Sequence[Join] = (),
) -> tuple[int, list[tuple[Any, ...]]]:
    """The dated records matching `where` (and `also`), latest first: (how many, one page of (record, student,
    *extra)). 422 when the period is reversed or longer than 366 days."""
    check_period(where.dari, where.sampai)
    filters = dated_filters(session, model.tanggal, **asdict(where))
    order = (model.tanggal.desc(), model.dibuat.desc(), model.id)
    return crud_common.page(session, model, [*filters, *also], paging, order=order, extra=extra, joins=joins)


def add(session: Session, kind: FeedKind, model: type[Record], anak: Anak, actor: str | None, **columns: Any) -> Record:
    """Store a record of `anak` (a random handle, recorded by `actor` now; `columns` are the domain's own) and queue
    its change-feed event (of `kind`, dated by the record)."""
    stamp = {"id": secrets.token_urlsafe(12), "id_anak": anak.id, "dicatat_oleh": actor, "dibuat": datetime.now(UTC)}
    record: Record = cast(Any, model)(**stamp, **columns)  # a table's constructor takes its columns
    session.add(record)
    perubahan.catat(session, kind, tanggal=record.tanggal, id_anak=record.id_anak)
    session.flush()
    return record


def create(
    request: Request,
    session: Session,
    body: Any,
    actor: str | None,
    key: str | None,
    write: Callable[[Anak], BaseModel],
) -> Any:
    """The idempotent create of a record of `body.id_anak`: hold the student until commit, replay the stored answer
    to `key`, 404 for an unknown student, else `write(student)` (which may refuse) and commit its answer with
    `key`."""
    once = idempotensi.Once.of(request, body, actor, key)
    found = crud_anak.lock_students(session, [body.id_anak])
    if (stored := once.replay(session)) is not None:
        return stored
    anak = crud_anak.get_anak(session, body.id_anak) if found else None
    if anak is None:
        raise HTTPException(status_code=404, detail="Anak tidak ditemukan")
    return once.commit(session, 201, write(anak))


def student(anak: Anak) -> dict[str, Any]:
    """What an answer says of a record's student: id, name, class and room."""
    return {"id_anak": anak.id, "nama": anak.nama, "kelas": anak.kelas, "kamar": anak.kamar}


def public(shape: type[Shape], record: Any, anak: Anak, **extra: Any) -> Shape:
    """`shape` of `record`: its columns that `shape` has, the `student`, and `extra`."""
    values = {name: getattr(record, name) for name in shape.model_fields if hasattr(record, name)}
    return shape(**{**values, **student(anak), **extra})


def create_as_sent(
    request: Request,
    session: Session,
    body: Any,
    actor: str | None,
    key: str | None,
    *,
    kind: FeedKind,
    model: type[StudentRecord],
    shape: type[BaseModel],
) -> Any:
    """The idempotent create of a record of `model` whose own columns are `body`'s fields, on a day up to today
    (else 422), with its change-feed event of `kind`, answered as `shape`."""
    check_not_future(body.tanggal)

    def write(anak: Anak) -> BaseModel:
        return public(shape, add(session, kind, model, anak, actor, **body.model_dump(exclude={"id_anak"})), anak)

    return create(request, session, body, actor, key, write)


def listing(
    session: Session, model: type[StudentRecord], where: RecordFilter, paging: Paging, *, shape: Any, page: type[Page]
) -> Page:
    """One `page` of the records matching `where`, latest first, each as `shape`."""
    total, found = search(session, model, where, paging)
    return page(total=total, data=[public(shape, record, anak) for record, anak in found])
