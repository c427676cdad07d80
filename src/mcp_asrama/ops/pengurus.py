"""`mcp-asrama pengurus`: the school's IT person keeps the staff list on the database itself, as `import` does (`--db`,
ASRAMA_DB_URL, the default file): add (`tambah`), change (`ubah`), deactivate (`nonaktif`, which also signs them out),
list (`daftar`), see or end a person's sign-ins (`sesi EMAIL [--cabut]`, for `--auth sekolah`) and set a local
account's password (`sandi`: typed twice at the terminal, or read from stdin when it is not one; never taken from the
command line, where the shell's history and the process list would keep it).

Every failure is one line on stderr: exit 2 for what was asked wrongly (a flag, a value), 1 for what the database
says (no such person, already on the list, cannot open it), as `import` does.
"""

import argparse
import getpass
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from mcp_asrama.contract.pengurus import PERAN, PengurusIn
from mcp_asrama.ops.database import cannot_open, database_url, schema_too_new

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from mcp_asrama.service.models.pengurus import Pengurus

MIN_SANDI = 8
MAX_SANDI = 1024  # what is hashed stays bounded
NO_ARGUMENT = (
    "pengurus sandi: a password is never given on the command line (the shell's history would keep it); "
    "type it when asked, or send it on stdin"
)


class Stop(Exception):
    """The command stops: `message` on stderr, exit `code`."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


@contextmanager
def opened(db_url: str) -> Iterator["Session"]:
    """A session on the database of `db_url` (its schema brought up to date), committed when the block ends well;
    what the database refuses becomes a `Stop` of one line."""
    from sqlalchemy.exc import SQLAlchemyError

    from mcp_asrama.service.db import init_schema, make_engine, make_sessionmaker
    from mcp_asrama.service.migrations import SchemaTooNew

    try:
        engine = make_engine(db_url)
        try:
            init_schema(engine)
            with make_sessionmaker(engine)() as session, session.begin():
                yield session
        finally:
            engine.dispose()
    except SchemaTooNew as exc:
        raise Stop(schema_too_new(db_url, exc)) from exc
    except (OSError, SQLAlchemyError) as exc:
        raise Stop(f"{cannot_open(db_url, exc)}; nothing was changed") from exc


def _checked(values: dict[str, Any]) -> PengurusIn:
    try:
        return PengurusIn.model_validate(values)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = str(error["loc"][0]) if error["loc"] else "pengurus"
        hint = {"peran": "one of " + ", ".join(PERAN), "email": "an email address"}.get(field, error["msg"])
        raise Stop(f"pengurus: {field}: {hint}", 2) from exc


def _rooms_stored(session: "Session", body: PengurusIn) -> None:
    """Refuse a staff record naming a room that is not stored (import the rooms first)."""
    from mcp_asrama.service.crud import pengurus as crud

    if unknown := crud.unknown_rooms(session, body.kamar):
        raise Stop("pengurus: " + crud.ROOMS_UNKNOWN.format(", ".join(unknown)), 2)


def _given(args: argparse.Namespace) -> dict[str, Any]:
    names = ("nama", "peran", "kamar", "kelas", "menulis", "aktif")
    return {name: value for name in names if (value := getattr(args, name, None)) is not None}


def _stored(person: "Pengurus") -> dict[str, Any]:
    return {name: getattr(person, name) for name in PengurusIn.model_fields}


def tambah(session: "Session", args: argparse.Namespace) -> str:
    from mcp_asrama.service.crud import pengurus as crud

    body = _checked({"email": args.email, **_given(args)})
    if crud.cari(session, body.email) is not None:
        raise Stop(f"pengurus: {body.email} is already on the list (change it with pengurus ubah)")
    _rooms_stored(session, body)
    crud.simpan(session, body)
    return f"added {body.email}"


def ubah(session: "Session", args: argparse.Namespace) -> str:
    from mcp_asrama.service.crud import pengurus as crud

    person = _known(session, args.email)
    body = _checked({**_stored(person), **_given(args)})
    _rooms_stored(session, body)
    crud.simpan(session, body)
    return f"changed {body.email}"


def nonaktif(session: "Session", args: argparse.Namespace) -> str:
    from mcp_asrama.service.crud import pengurus as crud

    person = _known(session, args.email)
    crud.nonaktif(session, person.email)
    return f"deactivated {person.email}: may no longer sign in"


def sesi(session: "Session", args: argparse.Namespace) -> str:
    from mcp_asrama.service.crud import pengurus as crud

    email = _known(session, args.email).email
    if args.cabut:
        crud.sesi(session, email, cabut=True)
        return f"ended every session and token of {email}: signing in again is needed"
    return f"{email}: {crud.sesi(session, email)} live sign-in(s) (end them with --cabut)"


def line(person: "Pengurus") -> str:
    """One staff member on one line: email, roles, rooms and classes, whether they may record, whether active."""
    parts = [person.email, ",".join(person.peran)]
    parts += [
        f"{unit}: {'; '.join(names)}" for unit, names in (("kamar", person.kamar), ("kelas", person.kelas)) if names
    ]
    parts += ["menulis"] if person.menulis else []
    parts += [] if person.aktif else ["nonaktif"]
    return "  ".join(parts)


def daftar(session: "Session", _args: argparse.Namespace) -> str:
    from mcp_asrama.service.crud import pengurus as crud

    return "\n".join(line(person) for person in crud.daftar(session)) or "no staff on the list yet"


def _known(session: "Session", email: str) -> "Pengurus":
    from mcp_asrama.service.crud import pengurus as crud

    person = crud.cari(session, email)
    if person is None:
        raise Stop(f"pengurus: {email.strip().casefold()} is not on the list (add it with pengurus tambah)")
    return person


def read_sandi() -> str:
    """The password: typed twice at a terminal, else the first line of stdin (and a second, when sent, the same)."""
    second: str | None
    if sys.stdin.isatty():
        first, second = getpass.getpass("sandi: "), getpass.getpass("sandi lagi: ")
    else:
        first, second = sys.stdin.readline().rstrip("\r\n"), sys.stdin.readline().rstrip("\r\n") or None
    if second is not None and second != first:
        raise Stop("pengurus sandi: the two passwords differ; nothing was changed")
    if not MIN_SANDI <= len(first) <= MAX_SANDI:
        raise Stop(f"pengurus sandi: a password has {MIN_SANDI} to {MAX_SANDI} characters; nothing was changed")
    return first


def cmd_pengurus(args: argparse.Namespace) -> int:
    """Run one `pengurus` command on the database of `--db`."""
    db_url = database_url(args.db, buat=args.buat)
    try:
        if args.pengurus_command == "sandi":
            if args.given:
                raise Stop(NO_ARGUMENT, 2)
            from mcp_asrama.service.crud import pengurus as crud

            with opened(db_url) as session:
                email = _known(session, args.email).email
            sandi = read_sandi()
            with opened(db_url) as session:
                crud.set_sandi(session, email, sandi)
            print(f"password set for {email}")
            return 0
        action: Callable[[Session, argparse.Namespace], str] = ACTIONS[args.pengurus_command]
        with opened(db_url) as session:
            print(action(session, args))
    except Stop as stop:
        print(stop, file=sys.stderr)
        return stop.code
    return 0


ACTIONS = {"tambah": tambah, "ubah": ubah, "nonaktif": nonaktif, "daftar": daftar, "sesi": sesi}


def add_parser(commands: Any, db_flag: Callable[[argparse.ArgumentParser], None]) -> None:
    """The `pengurus` subcommand and its commands."""
    pengurus = commands.add_parser("pengurus", help="keep the staff list (who signs in, in which roles and units)")
    sub = pengurus.add_subparsers(dest="pengurus_command", required=True)
    many = {"action": "extend", "nargs": "+"}
    for name, text in (("tambah", "add a staff member"), ("ubah", "change a staff member (only what is given)")):
        p = sub.add_parser(name, help=text)
        p.add_argument("email")
        p.add_argument("--nama", required=name == "tambah", help="full name, e.g. Ust. Ridwan")
        p.add_argument(
            "--peran",
            required=name == "tambah",
            type=lambda v: [r.strip() for r in v.split(",") if r.strip()],
            action="extend",
            help="roles, comma-separated or repeated: " + ", ".join(PERAN),
        )
        p.add_argument("--kamar", **many, metavar="NAMA", help="the rooms they are musyrif of (each quoted)")
        p.add_argument("--kelas", **many, metavar="NAMA", help="the classes they are wali kelas of")
        p.add_argument("--menulis", action=argparse.BooleanOptionalAction, help="may record through the assistant")
        if name == "ubah":
            p.add_argument("--aktif", action=argparse.BooleanOptionalAction, help="may sign in (again)")
    sub.add_parser(
        "nonaktif", help="deactivate a staff member (may no longer sign in; signed out at once)"
    ).add_argument("email")
    sessions = sub.add_parser("sesi", help="a staff member's live sign-ins (--auth sekolah); --cabut ends them all")
    sessions.add_argument("email")
    sessions.add_argument("--cabut", action="store_true", help="end every session and token now")
    sub.add_parser("daftar", help="every staff member: email, roles, rooms and classes, one line each")
    sandi = sub.add_parser(
        "sandi",
        help="set a local account's password: typed twice, or sent on stdin (never on the command line)",
    )
    sandi.add_argument("email")
    sandi.add_argument("given", nargs="*", help=argparse.SUPPRESS)
    for p in sub.choices.values():
        db_flag(p)
    pengurus.set_defaults(func=cmd_pengurus)
