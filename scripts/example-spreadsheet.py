"""Write examples/siswa-sekolah.xlsx: a school's own student sheet as it is kept in Excel (fictional data only).

It has what real sheets have and the importer takes: a `No` and a `NIS` column that are not of `anak` (ignored with
one warning), headers in the school's spelling (`Jenis Kelamin`, `Tanggal Lahir`), `Aktif`, `laki-laki`/`perempuan`,
dates typed as dd/mm/yyyy, and the NIK and phone columns formatted as text (a 16-digit number would lose its last
digit). NIKs are 99…: no province has code 99. Run: .venv/bin/python scripts/example-spreadsheet.py
"""

from datetime import datetime
from pathlib import Path

from openpyxl import Workbook
from openpyxl.styles import Font

OUT = Path(__file__).resolve().parents[1] / "examples" / "siswa-sekolah.xlsx"
HEADER = ["No", "NIS", "ID", "Nama", "Kelas", "Kamar", "Status", "Jenis Kelamin", "Nama Wali", "NIK", "No HP Wali",
          "Alamat", "Tanggal Lahir"]  # fmt: skip
STUDENTS = [
    ("S25001", "Ahmad Zaki Mubarak", "7B", "Al-Fatih 1", "Aktif", "Laki-laki", "Bapak Hasan Basri", "12/04/2013"),
    ("S25002", "Zahra Nurul Izzah", "7B", "Aisyah 1", "Aktif", "Perempuan", "Ibu Rina Marlina", "03/09/2013"),
    ("S25003", "Hafizah Kamila", "7B", "Aisyah 1", "Aktif", "perempuan", "Ibu Yuni Astuti", "21/01/2013"),
    ("S25004", "Rafi Alfarizi", "8A", "Umar 1", "Aktif", "laki-laki", "Bapak Joko Susilo", "30/06/2012"),
    ("S25005", "Naila Syifa Ramadhani", "8A", "Khadijah 1", "Sakit", "Perempuan", "Ibu Lilis Suryani", "15/11/2012"),
    ("S25006", "Ilham Maulana Yusuf", "9A", "Umar 1", "Aktif", "Laki-laki", "Bapak Dedi Kurniawan", "07/02/2011"),
]


def main() -> None:
    """Write the workbook, the same bytes of data on every run (its dates fixed)."""
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Data Santri"
    sheet.append(HEADER)
    for cell in sheet[1]:
        cell.font = Font(bold=True)
    for n, (id_, nama, kelas, kamar, status, jk, wali, lahir) in enumerate(STUDENTS, start=1):
        nik, phone = f"99000000000001{n:02d}", f"08120000020{n}"
        address = f"Jl. Contoh No. {10 + n}, Yogyakarta"
        sheet.append([n, f"2025{n:03d}", id_, nama, kelas, kamar, status, jk, wali, nik, phone, address, lahir])
    for column in ("J", "K", "M"):  # text cells, as a school types them
        for cell in sheet[column][1:]:
            cell.number_format = "@"
    for column, width in zip("ABCDEFGHIJKLM", (5, 10, 9, 26, 7, 12, 8, 14, 22, 20, 15, 28, 14), strict=True):
        sheet.column_dimensions[column].width = width
    book.properties.creator = "mcp-asrama"
    book.properties.created = book.properties.modified = datetime(2026, 12, 1)
    book.save(OUT)
    print(OUT)


if __name__ == "__main__":
    main()
