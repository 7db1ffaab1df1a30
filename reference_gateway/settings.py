"""One gateway's configuration (`GatewaySettings`, from the command line) and the seams tests and benchmarks
replace (`Hooks`: transports, the DNS resolver, the clock, the request-id factory)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import httpx

from reference_gateway.auth import KeyRing
from reference_gateway.policy.keys import KeyPolicy
from reference_gateway.policy.models import ModelCatalog
from reference_gateway.policy.vocabulary import Profile
from reference_gateway.upstream.client import UpstreamSettings
from reference_gateway.upstream.images import AllowList, ImageLimits, Resolver

MB = 1024 * 1024


@dataclass(frozen=True)
class GatewaySettings:
    profile: Profile
    catalog: ModelCatalog
    upstream: UpstreamSettings
    keys: KeyRing | None  # None: authentication switched off (`--no-auth`)
    ping_interval: float = 10.0
    # EZAT: "The whole request body can be up to 32 MB."
    max_body_bytes: int = 32 * MB
    image_limits: ImageLimits = field(default_factory=ImageLimits)
    image_allow: AllowList = field(default_factory=AllowList)
    # LYRouter: the workspace's Default Model, used when `model` is omitted, "" or null.
    default_model: str | None = None
    # Relay: the idempotency store and response cache (`sqlite:///FILE` or `redis://…`); None keeps no state.
    state_url: str | None = None
    # Relay: Gateway:Cache:TtlSeconds; 0 leaves the response cache off.
    cache_ttl_seconds: float = 0.0
    # Relay: Gateway:MaxImageBytes; None keeps the profile's default (5 MB).
    max_image_bytes: int | None = None
    # A reading (the docs are silent): request headers over 64 KB in all are a 431 envelope.
    max_header_bytes: int = 64 * 1024
    # The gateway's own limits on client keys (--rate-limit KEY=N, --over-budget-key KEY), by key.
    key_policies: Mapping[str, KeyPolicy] = field(default_factory=dict)


@dataclass(frozen=True)
class Hooks:
    """Seams for tests and benchmarks: transports, the DNS resolver, the clock and the request-id factory."""

    upstream_transport: httpx.AsyncBaseTransport | None = None
    image_transport: httpx.AsyncBaseTransport | None = None
    resolver: Resolver | None = None
    clock: Callable[[], float] = time.time
    new_request_id: Callable[[], str] = field(default=lambda: uuid.uuid4().hex)
