-- A database of mcp-asrama before Alembic (postgresql): the DDL its init_schema ran on an empty database,
-- then a few rows. Made by tests/data/previous_schema.py; do not edit (it stands for databases in use).

CREATE TABLE kamar (
	nama VARCHAR(100) NOT NULL, 
	gedung VARCHAR(100) NOT NULL, 
	kapasitas INTEGER NOT NULL, 
	musyrif VARCHAR(200), 
	PRIMARY KEY (nama)
);

CREATE TABLE anak (
	no SERIAL NOT NULL, 
	id VARCHAR(64) NOT NULL, 
	nama VARCHAR(200) NOT NULL, 
	kelas VARCHAR(20) NOT NULL, 
	kamar VARCHAR(100), 
	status VARCHAR(10) NOT NULL, 
	jenis_kelamin VARCHAR(1), 
	nama_wali VARCHAR(200), 
	nik VARCHAR(16), 
	no_hp_wali VARCHAR(20), 
	alamat VARCHAR(500), 
	tanggal_lahir DATE, 
	PRIMARY KEY (no), 
	UNIQUE (id)
);

CREATE INDEX ix_anak_kelas_ci ON anak (lower(kelas));

CREATE INDEX ix_anak_nama_id ON anak (nama, id);

CREATE INDEX ix_anak_kamar_ci ON anak (lower(kamar));

CREATE TABLE idempotensi (
	kunci VARCHAR(128) NOT NULL, 
	rute VARCHAR(300) NOT NULL, 
	sidik VARCHAR(64) NOT NULL, 
	status_code INTEGER NOT NULL, 
	respons TEXT NOT NULL, 
	waktu TIMESTAMP WITH TIME ZONE NOT NULL, 
	PRIMARY KEY (kunci)
);

CREATE TABLE absensi (
	tanggal DATE NOT NULL, 
	id_anak VARCHAR(64) NOT NULL, 
	status VARCHAR(5) NOT NULL, 
	keterangan VARCHAR(500), 
	PRIMARY KEY (tanggal, id_anak), 
	FOREIGN KEY(id_anak) REFERENCES anak (id) ON DELETE CASCADE
);

CREATE INDEX ix_absensi_anak_tanggal_status ON absensi (id_anak, tanggal, status);

CREATE TABLE riwayat_absensi (
	id SERIAL NOT NULL, 
	tanggal DATE NOT NULL, 
	id_anak VARCHAR(64) NOT NULL, 
	status_lama VARCHAR(5), 
	status_baru VARCHAR(5), 
	keterangan_lama VARCHAR(500), 
	keterangan_baru VARCHAR(500), 
	oleh VARCHAR(200), 
	waktu TIMESTAMP WITH TIME ZONE NOT NULL, 
	kunci VARCHAR(128), 
	PRIMARY KEY (id), 
	FOREIGN KEY(id_anak) REFERENCES anak (id) ON DELETE CASCADE
);

CREATE INDEX ix_riwayat_absensi_anak_tanggal ON riwayat_absensi (id_anak, tanggal, id);

CREATE TABLE izin (
	id VARCHAR(32) NOT NULL, 
	id_anak VARCHAR(64) NOT NULL, 
	dari DATE NOT NULL, 
	sampai DATE NOT NULL, 
	jenis VARCHAR(10) NOT NULL, 
	alasan VARCHAR(500), 
	tanggal_kembali DATE, 
	dibuat_oleh VARCHAR(200), 
	dibuat TIMESTAMP WITH TIME ZONE NOT NULL, 
	selesai_oleh VARCHAR(200), 
	PRIMARY KEY (id), 
	FOREIGN KEY(id_anak) REFERENCES anak (id) ON DELETE CASCADE
);

CREATE INDEX ix_izin_anak_dari ON izin (id_anak, dari);

DROP INDEX IF EXISTS ix_absensi_anak_tanggal;

CREATE INDEX IF NOT EXISTS ix_anak_kelas_ci ON anak (lower(kelas));

CREATE INDEX IF NOT EXISTS ix_anak_nama_id ON anak (nama, id);

CREATE INDEX IF NOT EXISTS ix_anak_kamar_ci ON anak (lower(kamar));

CREATE INDEX IF NOT EXISTS ix_absensi_anak_tanggal_status ON absensi (id_anak, tanggal, status);

CREATE INDEX IF NOT EXISTS ix_izin_anak_dari ON izin (id_anak, dari);

CREATE INDEX IF NOT EXISTS ix_riwayat_absensi_anak_tanggal ON riwayat_absensi (id_anak, tanggal, id);

CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE INDEX IF NOT EXISTS ix_anak_nama_trgm ON anak USING gin (lower(nama) gin_trgm_ops);

INSERT INTO kamar (nama, gedung, kapasitas, musyrif) VALUES ('Al-Fatih 1', 'Putra', 6, 'Ust. Ridwan');
INSERT INTO kamar (nama, gedung, kapasitas, musyrif) VALUES ('Aisyah 2', 'Putri', 6, 'Ustz. Halimah');

INSERT INTO anak (id, nama, kelas, kamar, status, jenis_kelamin, nama_wali, nik, no_hp_wali, alamat, tanggal_lahir) VALUES ('A001', 'Ahmad Fauzi', '7A', 'Al-Fatih 1', 'aktif', 'L', 'Bapak Hasan', '3171000000000001', '081200000001', 'Jl. Melati No. 1, Bogor', '2013-01-05');
INSERT INTO anak (id, nama, kelas, kamar, status, jenis_kelamin, nama_wali, nik, no_hp_wali, alamat, tanggal_lahir) VALUES ('A002', 'Budi Santoso', '8B', 'Al-Fatih 1', 'aktif', 'L', 'Ibu Sari', '3171000000000002', '081200000002', 'Jl. Mawar No. 2, Depok', '2012-02-06');
INSERT INTO anak (id, nama, kelas, kamar, status, jenis_kelamin, nama_wali, nik, no_hp_wali, alamat, tanggal_lahir) VALUES ('A003', 'Citra Lestari', '7A', 'Aisyah 2', 'izin', 'P', 'Bapak Joko', '3171000000000003', '081200000003', 'Jl. Kenanga No. 3, Bekasi', '2013-03-07');
INSERT INTO anak (id, nama, kelas, kamar, status, jenis_kelamin, nama_wali, nik, no_hp_wali, alamat, tanggal_lahir) VALUES ('A004', 'Dewi Anggraini', '9C', NULL, 'aktif', NULL, NULL, NULL, NULL, NULL, NULL);

INSERT INTO absensi (tanggal, id_anak, status, keterangan) VALUES ('2026-10-01', 'A002', 'izin', 'Izin sakit');
INSERT INTO absensi (tanggal, id_anak, status, keterangan) VALUES ('2026-10-02', 'A002', 'izin', 'Izin sakit');
INSERT INTO absensi (tanggal, id_anak, status, keterangan) VALUES ('2026-10-05', 'A001', 'hadir', NULL);
INSERT INTO absensi (tanggal, id_anak, status, keterangan) VALUES ('2026-10-05', 'A002', 'sakit', 'Demam');
INSERT INTO absensi (tanggal, id_anak, status, keterangan) VALUES ('2026-10-05', 'A003', 'hadir', NULL);
INSERT INTO absensi (tanggal, id_anak, status, keterangan) VALUES ('2026-10-06', 'A001', 'hadir', NULL);
INSERT INTO absensi (tanggal, id_anak, status, keterangan) VALUES ('2026-10-06', 'A002', 'hadir', NULL);
INSERT INTO absensi (tanggal, id_anak, status, keterangan) VALUES ('2026-10-06', 'A003', 'izin', 'Izin pulang');
INSERT INTO absensi (tanggal, id_anak, status, keterangan) VALUES ('2026-10-07', 'A003', 'izin', 'Izin pulang');
INSERT INTO absensi (tanggal, id_anak, status, keterangan) VALUES ('2026-10-08', 'A003', 'izin', 'Izin pulang');

INSERT INTO izin (id, id_anak, dari, sampai, jenis, alasan, tanggal_kembali, dibuat_oleh, dibuat, selesai_oleh) VALUES ('ab3Kq9ZfT0xYw1Lm', 'A003', '2026-10-06', '2026-10-08', 'pulang', 'Acara keluarga', NULL, 'Kantor', '2026-10-05 09:30:00+00:00', NULL);
INSERT INTO izin (id, id_anak, dari, sampai, jenis, alasan, tanggal_kembali, dibuat_oleh, dibuat, selesai_oleh) VALUES ('Qw7pR2sTu4vXy6Za', 'A002', '2026-10-01', '2026-10-03', 'sakit', NULL, '2026-10-03', 'Kantor', '2026-09-30 16:00:00+00:00', 'Ust. Ridwan');

INSERT INTO riwayat_absensi (tanggal, id_anak, status_lama, status_baru, keterangan_lama, keterangan_baru, oleh, waktu, kunci) VALUES ('2026-10-01', 'A002', NULL, 'izin', NULL, 'Izin sakit', 'Kantor', '2026-09-30 16:00:00+00:00', 'izin-A002-2026-10-01-kantor');
INSERT INTO riwayat_absensi (tanggal, id_anak, status_lama, status_baru, keterangan_lama, keterangan_baru, oleh, waktu, kunci) VALUES ('2026-10-02', 'A002', NULL, 'izin', NULL, 'Izin sakit', 'Kantor', '2026-09-30 16:00:00+00:00', 'izin-A002-2026-10-01-kantor');
INSERT INTO riwayat_absensi (tanggal, id_anak, status_lama, status_baru, keterangan_lama, keterangan_baru, oleh, waktu, kunci) VALUES ('2026-10-03', 'A002', NULL, 'izin', NULL, 'Izin sakit', 'Kantor', '2026-09-30 16:00:00+00:00', 'izin-A002-2026-10-01-kantor');
INSERT INTO riwayat_absensi (tanggal, id_anak, status_lama, status_baru, keterangan_lama, keterangan_baru, oleh, waktu, kunci) VALUES ('2026-10-03', 'A002', 'izin', NULL, 'Izin sakit', NULL, 'Ust. Ridwan', '2026-10-03 07:45:00+00:00', 'izin-A002-selesai-ridwan');
INSERT INTO riwayat_absensi (tanggal, id_anak, status_lama, status_baru, keterangan_lama, keterangan_baru, oleh, waktu, kunci) VALUES ('2026-10-05', 'A001', NULL, 'hadir', NULL, NULL, 'Ust. Ridwan', '2026-10-05 06:10:00+00:00', 'absen-2026-10-05-ridwan-01');
INSERT INTO riwayat_absensi (tanggal, id_anak, status_lama, status_baru, keterangan_lama, keterangan_baru, oleh, waktu, kunci) VALUES ('2026-10-05', 'A002', NULL, 'sakit', NULL, 'Demam', 'Ust. Ridwan', '2026-10-05 06:10:00+00:00', 'absen-2026-10-05-ridwan-01');
INSERT INTO riwayat_absensi (tanggal, id_anak, status_lama, status_baru, keterangan_lama, keterangan_baru, oleh, waktu, kunci) VALUES ('2026-10-05', 'A003', NULL, 'hadir', NULL, NULL, 'Ust. Ridwan', '2026-10-05 06:10:00+00:00', 'absen-2026-10-05-ridwan-01');
INSERT INTO riwayat_absensi (tanggal, id_anak, status_lama, status_baru, keterangan_lama, keterangan_baru, oleh, waktu, kunci) VALUES ('2026-10-06', 'A003', NULL, 'izin', NULL, 'Izin pulang', 'Kantor', '2026-10-05 09:30:00+00:00', 'izin-A003-2026-10-06-kantor');
INSERT INTO riwayat_absensi (tanggal, id_anak, status_lama, status_baru, keterangan_lama, keterangan_baru, oleh, waktu, kunci) VALUES ('2026-10-07', 'A003', NULL, 'izin', NULL, 'Izin pulang', 'Kantor', '2026-10-05 09:30:00+00:00', 'izin-A003-2026-10-06-kantor');
INSERT INTO riwayat_absensi (tanggal, id_anak, status_lama, status_baru, keterangan_lama, keterangan_baru, oleh, waktu, kunci) VALUES ('2026-10-08', 'A003', NULL, 'izin', NULL, 'Izin pulang', 'Kantor', '2026-10-05 09:30:00+00:00', 'izin-A003-2026-10-06-kantor');

INSERT INTO idempotensi (kunci, rute, sidik, status_code, respons, waktu) VALUES ('izin-A003-2026-10-06-kantor', 'POST /izin', '5f0c6d1e8a9b4c2d7e3f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d', 201, '{"id":"ab3Kq9ZfT0xYw1Lm","id_anak":"A003","dari":"2026-10-06","sampai":"2026-10-08"}', '2026-10-05 09:30:00+00:00');
