"""MCP methods by what they can reach: the guards (rate limits, audit) decide from the same list."""

# The handshake, liveness and the definition lists: no child's data, little work; a host must always be able to
# connect, see that the server is alive and learn what it offers.
NO_DATA_METHODS = frozenset(
    {
        "initialize",
        "server/discover",
        "ping",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
    }
)

# The tools that change children's data: each is confirmed by a person, and its audit line says how that went.
WRITE_TOOLS = frozenset(
    {
        "catat_absensi",
        "ajukan_izin",
        "akhiri_izin",
        "catat_pelanggaran",
        "catat_setoran_hafalan",
        "catat_kunjungan_klinik",
        "putuskan_usulan",
    }
)
# Read-only tools that exist only beside the writes (how an usulan of a write stands).
WITH_WRITES = frozenset({"cek_usulan"})
# The write tools that also need clinic staff (`peran:kesehatan` in the scope claim): hidden from anyone else.
CLINIC_TOOLS = frozenset({"catat_kunjungan_klinik"})
