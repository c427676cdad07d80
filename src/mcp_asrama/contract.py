"""What the data service tells its clients about itself, named once for both sides (no imports of either).

Every response of our data service carries `FITUR_HEADER: FILTER_GANDA`: it honours repeated `kelas`/`kamar`
query parameters as "any of these". A service written to the tutorial's contract does not send it, and would
silently use one of the values.
"""

FITUR_HEADER = "X-Asrama-Fitur"
FILTER_GANDA = "filter-ganda"
