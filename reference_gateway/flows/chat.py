"""The chat flow (EZAT, LYRouter): intake, the model's channels tried in catalog order through their family
adapters, the answer or the stream sent as soon as a channel serves it.

A stream counts as served once the provider's stream is open (LYRouter: at its first event, per the profile's
`wait_for_first_event`); from then on the client owns it and no other channel is tried.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from reference_gateway.adapters import CARRY_REASONING, Call, adapter_for
from reference_gateway.flows.attempts import first_success
from reference_gateway.policy.channels import requested_model, resolve
from reference_gateway.policy.models import Channel
from reference_gateway.services import Services
from reference_gateway.web.responses import JSONResponse, unless_disconnected
from reference_gateway.web.streaming import Encoded, event_stream


class ChatFlow:
    def __init__(self, services: Services) -> None:
        self.services = services

    async def start(self) -> None:
        return None

    async def aclose(self) -> None:
        return None

    async def chat_completions(self, request: Request) -> Response:
        services = self.services
        settings = services.settings
        body = await services.intake.read(request)
        name = requested_model(body, settings.default_model, settings.profile)
        model = resolve(settings.catalog, name, settings.profile)

        async def serve(channel: Channel) -> Response:
            request_id: str = request.state.request_id  # set by the request-id layer
            carry = bool(request.scope.get(CARRY_REASONING))
            call = Call(body, request.headers, model, channel, request_id, services.now(), carry)
            return await self._serve(call, request)

        return await first_success(model.channels, serve)

    async def _serve(self, call: Call, request: Request) -> Response:
        services = self.services
        adapter = adapter_for(call.channel)
        prepared = await adapter.prepare(call, services)
        if prepared.stream:
            opened = adapter.open_stream(prepared, services)
            # Errors before the upstream stream starts are still proper HTTP errors (raised on entering it), and
            # the next channel may still be tried; from here on the client owns the stream.
            events = await opened.context.__aenter__()
            return event_stream(
                opened.context,
                events.__aiter__(),
                Encoded(opened.source),
                ping_interval=services.settings.ping_interval,
                request_id=call.request_id,
            )
        answer = await unless_disconnected(request, adapter.complete(prepared, services))
        if answer is None:
            return Response(status_code=499)  # nobody is listening any more
        if answer.passed is not None:
            return Response(answer.passed.content, media_type=answer.passed.media_type)
        return JSONResponse(answer.completion)
