"""The endpoints beside chat completions: the model list (`GET {base}/models`), the capabilities catalog
(`/api/models`) and the health check."""

from __future__ import annotations

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

    async def model_capabilities(self, _request: Request) -> Response:
        data = [
            {"id": m.id, "upstream_model": m.upstream, "capabilities": m.capabilities()}
            for m in self.settings.catalog.models.values()
        ]
        return JSONResponse({"object": "list", "data": data})

    async def healthz(self, _request: Request) -> Response:
        return JSONResponse({"status": "ok", "profile": self.settings.profile.name})
