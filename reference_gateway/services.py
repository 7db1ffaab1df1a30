"""What the flows and the family adapters share for the gateway's lifetime: the settings and hooks, the
request intake, the upstream client and the image fetcher (opened and closed by the app's lifespan)."""

from __future__ import annotations

from reference_gateway.policy.vocabulary import Profile
from reference_gateway.settings import GatewaySettings, Hooks
from reference_gateway.upstream.client import ErrorStyle, Upstream
from reference_gateway.upstream.images import ImageFetcher
from reference_gateway.web.intake import Intake


class Services:
    def __init__(self, settings: GatewaySettings, hooks: Hooks) -> None:
        self.settings = settings
        self.hooks = hooks
        self.intake = Intake(settings)
        self._upstream: Upstream | None = None
        self._images: ImageFetcher | None = None

    @property
    def profile(self) -> Profile:
        return self.settings.profile

    async def start(self) -> None:
        profile = self.settings.profile
        style = ErrorStyle(
            forward=profile.upstream_errors == "forward",
            fallback_statuses=profile.fallback_statuses,
            canonical_json=profile.canonical_json,
            wait_for_first_event=profile.wait_for_first_event,
        )
        self._upstream = Upstream(
            self.settings.upstream, transport=self.hooks.upstream_transport, style=style
        )
        self._images = ImageFetcher(
            limits=self.settings.image_limits,
            allow=self.settings.image_allow,
            resolver=self.hooks.resolver,
            transport=self.hooks.image_transport,
        )

    async def aclose(self) -> None:
        if self._upstream is not None:
            await self._upstream.aclose()
        if self._images is not None:
            await self._images.aclose()

    @property
    def upstream(self) -> Upstream:
        if self._upstream is None:
            raise RuntimeError("the gateway is not started (lifespan not run)")
        return self._upstream

    @property
    def images(self) -> ImageFetcher:
        if self._images is None:
            raise RuntimeError("the gateway is not started (lifespan not run)")
        return self._images

    def now(self) -> int:
        """The `created` time of an answer."""
        return int(self.hooks.clock())

    def new_call_id(self) -> str:
        """A tool-call id the gateway mints (for families whose calls come without one: Gemini)."""
        return "call_" + self.hooks.new_request_id().replace("-", "")[:24]
