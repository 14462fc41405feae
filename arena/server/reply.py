"""JSON responses written straight from the library's dicts (no re-validation: the shapes are the library's)."""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import Response


def reply(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    body = json.dumps(data, separators=(",", ":"), default=str).encode()
    return Response(body, status_code=status, media_type="application/json", headers=headers)
