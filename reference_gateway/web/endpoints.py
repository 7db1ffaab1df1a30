"""The endpoints beside chat completions: the model list (`GET {base}/models`), the capabilities catalog
(`/api/models`) and the health check."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from reference_gateway.settings import GatewaySettings
from reference_gateway.web.intake import Intake
from reference_gateway.web.responses import JSONResponse


class Endpoints:
    def __init__(self, settings: GatewaySettings, intake: Intake) -> None:
        self.settings = settings
        self.intake = intake

    async def list_models(self, request: Request) -> Response:
        self.intake.authenticate(request)
        if "anthropic-version" in request.headers:
            # An Anthropic client (the SDKs' models.list, Claude Code's discovery) sends anthropic-version and
            # reads Anthropic's list: {data: [{type, id, display_name, created_at}], has_more, first_id, last_id}.
            return self._anthropic_models(request)
        data: list[dict[str, Any]] = [
            {
                "id": m.id,
                "object": "model",
                "created": m.created,
                "owned_by": m.channels[0].provider if m.channels else "anthropic",
            }
            for m in self.settings.catalog.models.values()
        ]
        if self.settings.profile.relay is not None:
            # Relay: "Check capabilities.vision on GET /v1/models before sending images to a model".
            for entry, m in zip(data, self.settings.catalog.models.values(), strict=True):
                entry["capabilities"] = {"vision": m.vision}
        return JSONResponse({"object": "list", "data": data})

    def _anthropic_models(self, request: Request) -> Response:
        models = sorted(self.settings.catalog.models.values(), key=lambda m: -m.created)  # newest first
        ids = [m.id for m in models]
        after = request.query_params.get("after_id")
        start = ids.index(after) + 1 if after in ids else 0
        try:
            limit = int(request.query_params.get("limit", "20"))
        except ValueError:
            limit = 0
        if not 1 <= limit <= 1000:
            body = {"type": "error", "error": {"type": "invalid_request_error",
                                               "message": "limit: must be an integer from 1 to 1000"}}  # fmt: skip
            return JSONResponse(body, status_code=400)
        page = models[start : start + limit]
        data = [
            {"type": "model", "id": m.id, "display_name": m.id,
             "created_at": datetime.fromtimestamp(m.created, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
            for m in page
        ]  # fmt: skip
        return JSONResponse({"data": data, "has_more": start + limit < len(models),
                             "first_id": data[0]["id"] if data else None,
                             "last_id": data[-1]["id"] if data else None})  # fmt: skip

    async def model_capabilities(self, _request: Request) -> Response:
        data = [
            {"id": m.id, "upstream_model": m.upstream, "capabilities": m.capabilities()}
            for m in self.settings.catalog.models.values()
        ]
        return JSONResponse({"object": "list", "data": data})

    async def healthz(self, _request: Request) -> Response:
        return JSONResponse({"status": "ok", "profile": self.settings.profile.name})
