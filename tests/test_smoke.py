import httpx2
import pytest

pytestmark = pytest.mark.anyio


async def test_tutorial_search_by_class(service: httpx2.AsyncClient) -> None:
    response = await service.get("/anak", params={"kelas": "7A"})
    assert response.status_code == 200
    body = response.json()
    assert body["total"] == 2
    assert [a["id"] for a in body["data"]] == ["A001", "A003"]
