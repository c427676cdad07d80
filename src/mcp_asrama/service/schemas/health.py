"""`GET /healthz`."""

from typing import Literal

from pydantic import (
    BaseModel,
)


class Kesehatan(BaseModel):
    """`GET /healthz`."""

    status: Literal["ok", "error"]
    database: Literal["ok", "unavailable"]
