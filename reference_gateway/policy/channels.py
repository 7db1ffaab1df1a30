"""Routing (pure): the requested model name → the catalog entry whose channels serve it, or the profile's error.

LYRouter "Channel selection and fallback": channels are tried in catalog order; the app moves to the next one
only after a failure marked `retryable` at the upstream boundary, and never once streaming output has started.
"""

from __future__ import annotations

from typing import Any

from reference_gateway.policy.models import CHAT_COMPLETIONS, ModelCatalog, ModelInfo
from reference_gateway.policy.vocabulary import Profile


def requested_model(body: dict[str, Any] | Any, default_model: str | None, profile: Profile) -> str:
    """The model name to serve. LYRouter: "When it is omitted, "" or null, the workspace's Default Model is used;
    without a Default Model, the request returns 400"."""
    name = body.get("model") if isinstance(body, dict) else None
    if name is None or name == "":
        if default_model is None:
            raise profile.requests.missing_model.error()
        return default_model
    if not isinstance(name, str):
        raise profile.requests.missing_model.error()
    return name


def resolve(catalog: ModelCatalog, name: str, profile: Profile) -> ModelInfo:
    """The catalog entry for `name`, refused per the profile when it cannot serve Chat Completions here."""
    model = catalog.get(name)
    if model is None or not model.channels:
        # LYRouter: 503 no_route_candidate, "No channel can serve this request".
        raise profile.requests.unknown_model.error(model=name)
    if not model.enabled:
        # LYRouter: 403 model_not_available, "The workspace has not enabled this model".
        raise profile.requests.model_not_enabled.error(model=name)
    if CHAT_COMPLETIONS not in model.apis:
        # LYRouter: 400 unsupported_model_api, "for example an image generation model".
        raise profile.requests.unsupported_api.error(model=name)
    return model
