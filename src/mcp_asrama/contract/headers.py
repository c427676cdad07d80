"""What the data service tells its clients about itself, named once for both sides (no imports of either).

Every response of our data service carries `FITUR_HEADER: FILTER_GANDA`: it honours repeated `kelas`/`kamar`
query parameters as "any of these". A service written to the tutorial's contract does not send it, and would
silently use one of the values. `NILAI_LAMA` says a write's body may carry the old values its caller read
(`status_lama`, `keterangan_lama`): when a stored record differs, the whole write is refused with 409 and
`KONFLIK_HEADER: BERUBAH`. A client sends them only to a service that declared it.
"""

FITUR_HEADER = "X-Asrama-Fitur"
FILTER_GANDA = "filter-ganda"
NILAI_LAMA = "nilai-lama"
FITUR = f"{FILTER_GANDA}, {NILAI_LAMA}"
KONFLIK_HEADER = "X-Asrama-Konflik"
BERUBAH = "berubah"
