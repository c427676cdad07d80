"""The school's own authorization server (`--auth sekolah`)."""
