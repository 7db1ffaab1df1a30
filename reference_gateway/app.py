"""The app: each inbound adapter's routes wired to the profile's flow, the endpoints, the ASGI layers around them,
and the lifespan that opens and closes what they share. Everything else lives below it (see the package
docstring).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp

from reference_gateway.flows import flow_for
from reference_gateway.inbound import INBOUND
from reference_gateway.services import Services
from reference_gateway.settings import GatewaySettings, Hooks
from reference_gateway.web.endpoints import Endpoints
from reference_gateway.web.middleware import EXCEPTION_HANDLERS, RequestIdMiddleware, UnexpectedErrors
from reference_gateway.web.observability import ObservabilityMiddleware

__all__ = ["GatewaySettings", "Hooks", "create_app"]


def create_app(settings: GatewaySettings, hooks: Hooks | None = None) -> ASGIApp:
    hooks = hooks or Hooks()
    services = Services(settings, hooks)
    flow = flow_for(services)
    endpoints = Endpoints(settings, services.intake)
    routes: list[BaseRoute] = [
        Route("/healthz", endpoints.healthz, methods=["GET"]),
        Route("/api/models", endpoints.model_capabilities),
    ]
    for base in settings.profile.base_paths:
        for inbound in INBOUND:  # one adapter per inbound API, the same flow behind each
            routes.extend(inbound.routes(base, flow))
        routes.append(Route(f"{base}/models", endpoints.list_models, methods=["GET"]))

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        await services.start()
        await flow.start()
        try:
            yield
        finally:
            await services.aclose()
            await flow.aclose()

    # Starlette always wraps the app in its ServerErrorMiddleware (which re-raises), so the catch-all sits just
    # inside it, outside everything that can raise; the request-id layer outside Starlette never raises and
    # stamps the id on the 500 too.
    app: ASGIApp = Starlette(
        routes=routes,
        middleware=[Middleware(UnexpectedErrors)],
        lifespan=lifespan,
        exception_handlers=dict(EXCEPTION_HANDLERS),
    )
    if settings.profile.relay is not None:
        app = ObservabilityMiddleware(app, settings.profile.relay, hooks.new_request_id)
    return RequestIdMiddleware(app, hooks.new_request_id)
