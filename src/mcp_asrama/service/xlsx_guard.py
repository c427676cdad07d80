"""What an XLSX workbook may hold before openpyxl opens it: every part is checked from the zip's directory (how
far it unpacks, in all and against its packed size; stored or deflated only), then every part that an XML parser
would read is streamed once through expat, with nothing kept but counts.

The XML check refuses a document type declaration outright, as defusedxml's `forbid_dtd` does: without one there
is no entity to expand (billion laughs) and none to fetch (external entities). It counts what openpyxl holds in
memory at once, and refuses as soon as a bound is passed: the elements of one row of a sheet, of one shared string,
or of any other part (which openpyxl parses whole); a sheet's rows, columns and cells; the text of one element.
Expat is used directly rather than through defusedxml's parsers: they build elements, and this pass must stay
cheap beside openpyxl's own (about 2 s for a sheet of 100,000 students against 27 s to read it).
"""

import zipfile
from pathlib import Path
from typing import IO, Any
from xml.parsers import expat

MAX_ROWS = 200_000  # data rows: a school of 100,000 students fits twice
MAX_COLUMNS = 64  # a file has at most 11 named columns; empty ones past the last are dropped
MAX_CELLS = 4_000_000  # of a sheet (200,000 rows of 20)
MAX_STRINGS = 2_000_000  # shared strings of a workbook (200,000 students with 10 different texts each)
MAX_TEXT = 32_767  # characters of one cell, as in Excel; also of one element's text or attributes
MAX_UNPACKED_BYTES = 256 * 2**20  # a sheet of 200,000 students written with inline strings unpacks to ~130 MB
MAX_RATIO = 100  # unpacked to packed, for a part over 1 MiB (a sheet of students packs about 12 to 1)
MAX_PARTS = 10_000
MAX_PART_ELEMENTS = 250_000  # of a part openpyxl parses whole (styles of Excel's 64,000 formats fit)
MAX_UNIT_ELEMENTS = 4_096  # of one row of a sheet or one shared string
_UNITS = {"worksheet": "row", "sst": "si"}  # the root of a part, and the element openpyxl parses one at a time
_CHUNK = 2**20


class Refused(Exception):
    """The workbook passes a bound; the message says which, in a few words naming no value."""


class _Counts:
    """Expat's handlers for one part: counts of what openpyxl would hold, refused past their bounds."""

    def __init__(self) -> None:
        self.depth = 0
        self.root = ""
        self.unit_depth = 0  # depth of the row or shared string being read, 0 outside one
        self.unit_elements = 0
        self.units = 0
        self.other_elements = 0
        self.row = 0  # the row's number as openpyxl counts it
        self.column = 0  # the cell's column as openpyxl counts it
        self.cells = 0
        self.text = 0

    def start(self, name: str, attributes: dict[str, str]) -> None:
        local = name.rpartition(" ")[2]
        self.depth += 1
        self.text = sum(map(len, attributes.values()))
        self.data("")
        if self.depth == 1:
            self.root = local
        if self.unit_depth:
            self.unit_elements += 1
            if self.unit_elements > MAX_UNIT_ELEMENTS:
                raise Refused(f"the workbook has more than {MAX_UNIT_ELEMENTS:,} XML elements in one row or string")
            if local == "c" and self.root == "worksheet":
                self._cell(attributes.get("r"))
        elif local == _UNITS.get(self.root):
            self.unit_depth, self.unit_elements = self.depth, 1
            self.units += 1
            if self.root == "worksheet":
                self._row(attributes.get("r"))
            elif self.units > MAX_STRINGS:
                raise Refused(f"the workbook has more than {MAX_STRINGS:,} shared strings")
        else:
            self.other_elements += 1
            if self.other_elements > MAX_PART_ELEMENTS:
                raise Refused(f"the workbook has more than {MAX_PART_ELEMENTS:,} XML elements in one part")

    def end(self, _name: str) -> None:
        if self.depth == self.unit_depth:
            self.unit_depth = 0
        self.depth -= 1
        self.text = 0

    def data(self, text: str) -> None:
        self.text += len(text)
        if self.text > MAX_TEXT:
            raise Refused(f"the workbook has a cell or element of more than {MAX_TEXT:,} characters")

    def _row(self, number: str | None) -> None:
        if number is None:
            self.row += 1
        else:
            try:
                value = float(number)
            except ValueError:
                raise Refused("the workbook has a row without a valid number") from None
            self.row = int(value) if 0 < value <= MAX_ROWS + 1 else MAX_ROWS + 2
        if self.units > MAX_ROWS + 1 or self.row > MAX_ROWS + 1:
            raise Refused(f"more than {MAX_ROWS:,} data rows: split the file")
        self.column = 0

    def _cell(self, reference: str | None) -> None:
        letters = (reference or "").rstrip("0123456789")
        if letters and (len(letters) > 3 or not letters.isalpha() or not letters.isascii()):
            raise Refused(f"row {self.row}: a cell without a valid reference")
        column = 0
        for letter in letters.upper():
            column = column * 26 + ord(letter) - ord("A") + 1
        self.column = column or self.column + 1
        if self.column > MAX_COLUMNS:
            raise Refused(f"row {self.row}: more than {MAX_COLUMNS} columns: delete the columns after the last one")
        self.cells += 1
        if self.cells > MAX_CELLS:
            raise Refused(f"more than {MAX_CELLS:,} cells: split the file")


def _refuse_dtd(*_: Any) -> None:
    raise Refused("the workbook's XML declares a document type (entities), which no workbook needs: refused")


def _check_part(first: bytes, rest: IO[bytes]) -> None:
    """Stream one part (its first chunk, then the rest) through expat with `_Counts`; Refused at the first bound
    passed or at an XML error."""
    counts = _Counts()
    parser = expat.ParserCreate(namespace_separator=" ")
    parser.buffer_text = True
    parser.StartDoctypeDeclHandler = _refuse_dtd
    parser.EntityDeclHandler = _refuse_dtd
    parser.StartElementHandler = counts.start
    parser.EndElementHandler = counts.end
    parser.CharacterDataHandler = counts.data
    try:
        parser.Parse(first, False)
        while chunk := rest.read(_CHUNK):
            parser.Parse(chunk, False)
        parser.Parse(b"", True)
    except expat.ExpatError as exc:
        raise Refused(
            f"the workbook's XML is broken ({expat.ErrorString(exc.code)}): save it again as .xlsx or CSV"
        ) from None


def _looks_like_xml(head: bytes) -> bool:
    """Whether an XML parser would take a part that starts so (a byte-order mark, `<`, or UTF-16 without a mark);
    images and other binary parts are left alone."""
    if head.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        return True
    start = head.lstrip(b" \t\r\n")
    return not start or start[:1] in (b"<", b"\x00")


def check_workbook(path: Path) -> None:
    """Refused when the workbook at `path` passes a bound (module docstring); zipfile.BadZipFile and OSError as
    zipfile raises them."""
    with zipfile.ZipFile(path) as archive:
        parts = archive.infolist()
        if len(parts) > MAX_PARTS:
            raise Refused(f"the workbook has more than {MAX_PARTS:,} parts")
        if sum(p.file_size for p in parts) > MAX_UNPACKED_BYTES:
            raise Refused(
                f"the workbook unpacks to more than {MAX_UNPACKED_BYTES // 2**20} MB: split it or save it as CSV"
            )
        for part in parts:
            if part.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                raise Refused("the workbook has a part packed in a way spreadsheet programs do not use")
            if part.file_size > 2**20 and part.file_size > MAX_RATIO * part.compress_size:
                raise Refused(f"the workbook has a part that unpacks to more than {MAX_RATIO} times its packed size")
        for part in (p for p in parts if p.file_size):
            with archive.open(part) as stream:
                first = stream.read(_CHUNK)
                if _looks_like_xml(first[:64]):
                    _check_part(first, stream)
