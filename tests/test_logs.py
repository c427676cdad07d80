import io
import json
import logging

import pytest

from mcp_asrama.logs import DropQueryString, JsonFormatter, configure_logging


def test_json_formatter_writes_one_object_per_line_with_extra_fields() -> None:
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "hello %s", ("world",), None)
    record.tool = "cari_anak"
    line = JsonFormatter().format(record)
    assert "\n" not in line
    entry = json.loads(line)
    assert entry["message"] == "hello world" and entry["tool"] == "cari_anak" and entry["level"] == "info"


def test_access_log_drops_the_query_string_that_may_hold_a_childs_name() -> None:
    record = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5000", "GET", "/anak?nama=Siti+Aminah&limit=20", "1.1", 200),
        None,
    )
    assert DropQueryString().filter(record)
    assert "Siti" not in record.getMessage() and "/anak" in record.getMessage()


def test_http_client_request_lines_are_not_logged(monkeypatch: pytest.MonkeyPatch) -> None:
    stream = io.StringIO()
    configure_logging("INFO")
    logging.getLogger().handlers[0].setStream(stream)  # type: ignore[attr-defined]
    logging.getLogger("httpx2").info("HTTP Request: GET http://svc/anak?nama=Siti%20Aminah")
    logging.getLogger("mcp_asrama.test").info("kept")
    assert "Siti" not in stream.getvalue()
    assert "kept" in stream.getvalue()
