"""The service's 422 answers say where and what, never the value sent: a bad body or query may carry a child's name
or a clinic note (FastAPI's own answer echoes it as `input`, and `ctx`)."""

from typing import Any

import httpx2
import pytest

pytestmark = pytest.mark.anyio

SECRET = "Siti Aminah, epilepsi"
LONG = (SECRET + " ") * 30  # over every text field's limit


async def _refused(response: httpx2.Response) -> list[dict[str, Any]]:
    assert response.status_code == 422, response.text
    assert "Siti" not in response.text and "epilepsi" not in response.text
    detail = response.json()["detail"]
    assert detail and all(set(e) == {"type", "loc", "msg"} for e in detail)
    return list(detail)


IZIN = {"id_anak": "A001", "dari": "2026-10-06", "sampai": "2026-10-07", "jenis": "pulang"}


@pytest.mark.parametrize(
    "body",
    [
        {**IZIN, "alasan": LONG},
        {**IZIN, "alasan": SECRET + "\x00"},
        {**IZIN, "jenis": SECRET},
        {**IZIN, "dari": SECRET},
        {**IZIN, "id_anak": SECRET},
        {**IZIN, "id_anak": 5, "alasan": None, "sampai": [SECRET]},
    ],
)
async def test_a_bad_body_is_refused_without_its_values(reader: httpx2.AsyncClient, body: dict[str, Any]) -> None:
    detail = await _refused(await reader.post("/izin", json=body, headers={"Idempotency-Key": "uji-422-body-0001"}))
    assert all(e["loc"][0] == "body" for e in detail)


async def test_an_unknown_field_is_located_without_its_name(reader: httpx2.AsyncClient) -> None:
    body = {**IZIN, SECRET: "x"}
    detail = await _refused(await reader.post("/izin", json=body, headers={"Idempotency-Key": "uji-422-extra-0001"}))
    assert detail == [{"type": "extra_forbidden", "loc": ["body", "?"], "msg": "Extra inputs are not permitted"}]


async def test_a_body_that_is_not_json_is_refused_without_its_text(reader: httpx2.AsyncClient) -> None:
    broken = '{"id_anak": "A001", "alasan": "' + SECRET
    response = await reader.post(
        "/izin", content=broken, headers={"Content-Type": "application/json", "Idempotency-Key": "uji-422-json-0001"}
    )
    assert (await _refused(response))[0]["type"] == "json_invalid"


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("/anak", {"limit": SECRET}),
        ("/anak", {"status": SECRET}),
        ("/anak", {"nama": LONG}),
        ("/anak", {"kamar": [SECRET + "\x00"]}),
        ("/absensi", {"tanggal": SECRET}),
        ("/kesehatan", {"dari": SECRET}),
    ],
)
async def test_a_bad_query_is_refused_without_its_values(
    reader: httpx2.AsyncClient, path: str, params: dict[str, Any]
) -> None:
    detail = await _refused(await reader.get(path, params=params))
    assert detail[0]["loc"][0] == "query" and detail[0]["msg"]


async def test_the_message_still_says_what_is_wrong(reader: httpx2.AsyncClient) -> None:
    detail = await _refused(await reader.get("/anak", params={"limit": "0"}))
    assert detail == [
        {"type": "greater_than_equal", "loc": ["query", "limit"], "msg": "Input should be greater than or equal to 1"}
    ]
