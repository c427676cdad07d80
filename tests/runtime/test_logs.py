import io
import json
import logging
import sys

import httpx2
import pytest
from fastapi import FastAPI
from starlette.types import Receive, Scope, Send

from mcp_asrama.runtime.logs import (
    UNLISTED_URI,
    UNMATCHED_ROUTE,
    AccessLog,
    JsonFormatter,
    RedactMcpRecords,
    UriTemplate,
    configure_logging,
    name_uri_templates,
)

TEMPLATES = (UriTemplate.of("asrama://kamar"), UriTemplate.of("asrama://anak/{id_anak}"))


def test_json_formatter_writes_one_object_per_line_with_extra_fields() -> None:
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "hello %s", ("world",), None)
    record.tool = "cari_anak"
    line = JsonFormatter().format(record)
    assert "\n" not in line
    entry = json.loads(line)
    assert entry["message"] == "hello world" and entry["tool"] == "cari_anak" and entry["level"] == "info"


def sdk_record(
    msg: str, *args: object, name: str = "mcp.server.mcpserver.server", **extra: object
) -> logging.LogRecord:
    record = logging.LogRecord(name, logging.INFO, __file__, 1, msg, args, None)
    record.__dict__.update(extra)
    return record


def redacted(record: logging.LogRecord) -> logging.LogRecord:
    redact = RedactMcpRecords()
    redact.templates = TEMPLATES
    assert redact.filter(record)
    return record


def test_a_failed_resource_read_is_logged_by_its_uri_template_without_the_childs_name() -> None:
    record = redacted(
        sdk_record(
            "Resource %r failed: %r",
            "asrama://anak/Siti%20Aminah",
            "Anak dengan id 'Siti Aminah' tidak ditemukan; lihat asrama://anak/Siti%20Aminah",
        )
    )
    message = record.getMessage()
    assert "Siti" not in message and "Aminah" not in message
    assert message == (
        "Resource 'asrama://anak/{id_anak}' failed: "
        "\"Anak dengan id '{id_anak}' tidak ditemukan; lihat asrama://anak/{id_anak}\""
    )


def test_a_uri_no_template_matches_is_a_placeholder_and_static_uris_stay() -> None:
    unknown = redacted(
        sdk_record("Resource %r failed: %r", "asrama://anak/Siti/Aminah", "Unknown: asrama://anak/Siti/Aminah")
    )
    assert unknown.getMessage() == f"Resource '{UNLISTED_URI}' failed: 'Unknown: {UNLISTED_URI}'"
    assert redacted(sdk_record("Getting resource", uri="asrama://kamar")).__dict__["uri"] == "asrama://kamar"
    looked_up = redacted(sdk_record("Getting resource", name="mcp.server.x", uri="asrama://anak/Siti Aminah"))
    assert looked_up.__dict__["uri"] == "asrama://anak/{id_anak}"


def test_payload_objects_in_sdk_records_show_as_their_type() -> None:
    class SessionMessage:
        def __repr__(self) -> str:
            return "SessionMessage(nama='Siti Aminah')"

    record = redacted(sdk_record("dropped a frame: %r (%d)", SessionMessage(), 3, name="mcp.server.runner"))
    assert record.getMessage() == "dropped a frame: <SessionMessage> (3)"


def test_records_of_other_loggers_are_left_as_they_are() -> None:
    record = redacted(sdk_record("searching %s", "asrama://anak/Siti Aminah", name="mcpx.other"))
    assert record.getMessage() == "searching asrama://anak/Siti Aminah"


def capture(level: str = "DEBUG") -> io.StringIO:
    stream = io.StringIO()
    configure_logging(level)
    logging.getLogger().handlers[0].setStream(stream)  # type: ignore[attr-defined]
    return stream


def test_configured_logging_names_sdk_uris_by_the_templates_the_server_names() -> None:
    stream = capture()
    logger = logging.getLogger("mcp.server.mcpserver.server")
    logger.info("Resource %r failed: %r", "asrama://anak/Siti Aminah", "not found")
    name_uri_templates(["asrama://kamar", "asrama://anak/{id_anak}"])
    logger.info("Resource %r failed: %r", "asrama://anak/Siti Aminah", "not found")
    first, second = (json.loads(line)["message"] for line in stream.getvalue().splitlines())
    assert first == f"Resource '{UNLISTED_URI}' failed: 'not found'"
    assert second == "Resource 'asrama://anak/{id_anak}' failed: 'not found'"


def test_http_client_request_lines_and_sse_payloads_are_not_logged() -> None:
    stream = capture()
    logging.getLogger("httpx2").info("HTTP Request: GET http://svc/anak?nama=Siti%20Aminah")
    logging.getLogger("sse_starlette.sse").debug("chunk: %s", b'{"nama": "Siti Aminah"}')
    logging.getLogger("mcp_asrama.test").info("kept")
    assert "Siti" not in stream.getvalue()
    assert "kept" in stream.getvalue()


def test_uvicorns_access_line_with_the_raw_path_is_not_logged() -> None:
    stream = capture()
    logging.getLogger("uvicorn.access").info(
        '%s - "%s %s HTTP/%s" %d', "127.0.0.1:5000", "GET", "/anak/Siti", "1.1", 200
    )
    logging.getLogger("uvicorn.error").info("kept")
    assert "Siti" not in stream.getvalue() and "kept" in stream.getvalue()


def service() -> FastAPI:
    app = FastAPI()

    @app.get("/anak/{id_anak}")
    def anak(id_anak: str) -> dict[str, str]:
        return {"id": id_anak}

    return app


async def plain(scope: Scope, receive: Receive, send: Send) -> None:
    await send({"type": "http.response.start", "status": 204, "headers": []})
    await send({"type": "http.response.body", "body": b""})


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("app", "path", "route", "status"),
    [
        (service(), "/anak/Siti%20Aminah?nama=Siti", "/anak/{id_anak}", 200),
        (service(), "/Siti/Aminah?nama=Siti", UNMATCHED_ROUTE, 404),
        (plain, "/healthz?nama=Siti", "/healthz", 204),
        (plain, "/Siti", UNMATCHED_ROUTE, 204),
    ],
)
async def test_access_log_names_the_route_template_never_the_path_or_query(
    app: object, path: str, route: str, status: int, caplog: pytest.LogCaptureFixture
) -> None:
    logged = AccessLog(app, plain_paths=["/healthz"])  # type: ignore[arg-type]
    caplog.set_level(logging.INFO, logger="mcp_asrama.access")
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=logged), base_url="http://t") as client:
        assert (await client.get(path)).status_code == status
    (record,) = [r for r in caplog.records if r.name == "mcp_asrama.access"]
    assert record.getMessage() == f"GET {route} {status}"
    assert record.__dict__["route"] == route and record.__dict__["status"] == status
    assert "Siti" not in JsonFormatter().format(record)


@pytest.mark.anyio
async def test_access_log_counts_an_app_crash_as_500(caplog: pytest.LogCaptureFixture) -> None:
    async def crash(scope: Scope, receive: Receive, send: Send) -> None:
        raise RuntimeError("Siti")

    caplog.set_level(logging.INFO, logger="mcp_asrama.access")
    with pytest.raises(RuntimeError):
        await AccessLog(crash)({"type": "http", "method": "GET", "path": "/anak/Siti"}, None, None)  # type: ignore[arg-type]
    assert [r.getMessage() for r in caplog.records if r.name == "mcp_asrama.access"] == [f"GET {UNMATCHED_ROUTE} 500"]


@pytest.mark.anyio
async def test_refused_requests_are_counted_not_logged_one_by_one(caplog: pytest.LogCaptureFixture) -> None:
    async def refuse(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 429, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    logged = AccessLog(refuse)
    caplog.set_level(logging.INFO, logger="mcp_asrama.access")
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=logged), base_url="http://t") as client:
        for _ in range(100):
            assert (await client.post("/mcp")).status_code == 429
        assert len([r for r in caplog.records if r.name == "mcp_asrama.access"]) == 1
        logged.refusals.interval = 0
        await client.post("/mcp")
    lines = [r for r in caplog.records if r.name == "mcp_asrama.access"]
    assert [r.__dict__["refused"] for r in lines] == [
        [{"method": "POST", "route": UNMATCHED_ROUTE, "status": 429, "count": 1}],
        [{"method": "POST", "route": UNMATCHED_ROUTE, "status": 429, "count": 100}],
    ]


def test_an_exception_is_logged_by_type_and_frames_never_its_message() -> None:
    names = ["Prayoga Lestari", "Siti Aminah"]  # data, as a request would bring it

    def lookup(key: str, shown: str) -> None:
        try:
            {}[key]
        except KeyError as exc:
            raise ValueError(f"input_value={shown!r}") from exc

    try:
        lookup(*names)
    except ValueError:
        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "tool crashed", (), sys.exc_info())
    entry = json.loads(JsonFormatter().format(record))
    assert "builtins.ValueError" in entry["exception"] and "builtins.KeyError" in entry["exception"]
    assert "in lookup" in entry["exception"]
    for name in names:
        assert name not in entry["exception"]
