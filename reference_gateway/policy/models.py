"""The model catalog: which ids the gateway serves, their channels (upstream protocol, provider, model id, base
path; tried in order), capabilities, and the workspace's default model (`models.yaml`, `models-lyrouter.yaml`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, cast

_EFFORT_LEVELS = ("low", "medium", "high", "xhigh", "max")
_PROVIDERS = ("anthropic", "openai", "dashscope", "deepseek", "gemini", "other")
Protocol = Literal["anthropic", "openai", "gemini"]
CHAT_COMPLETIONS = "chat_completions"


@dataclass(frozen=True)
class Channel:
    """One upstream source of a model. `protocol` picks the family adapter (`reference_gateway.adapters`), which
    puts `base_path` before its own path: `/v1/messages` (Anthropic), `/chat/completions` (OpenAI-compatible,
    where the base path usually ends in `/v1`), `/v1beta/models/{upstream}:…` (Gemini)."""

    protocol: Protocol
    provider: str  # anthropic | openai | dashscope | deepseek | other
    upstream: str
    base_path: str = ""
    # An OpenAI channel whose upstream also serves OpenAI's Responses API (`{base_path}/responses`): the gateway's
    # /v1/responses passes its requests through there instead of bridging them through chat (inbound/responses.py).
    responses: bool = False


@dataclass(frozen=True)
class Prices:
    """USD per million tokens (Relay: the catalog prices that X-Relay-Cost-Usd is computed from)."""

    input: Decimal
    output: Decimal
    cached: Decimal  # cache reads ("cost prices the cached reads at the cached rate")
    cache_write: Decimal  # cache writes; the input price unless the catalog says otherwise


@dataclass(frozen=True)
class ModelInfo:
    id: str
    upstream: str
    created: int
    vision: bool
    caching: bool
    sampling: bool
    efforts: tuple[str, ...]
    forced_tool_choice: bool
    max_output_tokens: int
    channels: tuple[Channel, ...] = ()
    enabled: bool = True  # LYRouter: a model the workspace has not enabled is 403 model_not_available
    apis: tuple[str, ...] = (CHAT_COMPLETIONS,)
    prices: Prices | None = None
    # Relay: "fallback along the model's fallback chain": catalog ids tried in order after this model fails.
    fallbacks: tuple[str, ...] = ()

    def capabilities(self) -> dict[str, Any]:
        return {
            "sampling": self.sampling,
            "vision": self.vision,
            "caching": self.caching,
            "max_output_tokens": self.max_output_tokens,
            "reasoning_efforts": list(self.efforts),
            "forced_tool_choice": self.forced_tool_choice,
        }


@dataclass(frozen=True)
class ModelCatalog:
    models: Mapping[str, ModelInfo]
    default_model: str | None = None  # LYRouter: the workspace's Default Model

    def get(self, model_id: str) -> ModelInfo | None:
        return self.models.get(model_id)


class ModelCatalogError(ValueError):
    """The catalog file is malformed."""


def _channel(entry: Any, where: str) -> Channel:
    if not isinstance(entry, dict):
        raise ModelCatalogError(f"{where}: expected a mapping")
    protocol = entry.get("protocol", "anthropic")
    if protocol not in ("anthropic", "openai", "gemini"):
        raise ModelCatalogError(f"{where}.protocol: use anthropic, openai or gemini")
    provider = str(entry.get("provider", protocol if protocol in ("anthropic", "gemini") else "other"))
    if provider not in _PROVIDERS:
        raise ModelCatalogError(f"{where}.provider: use one of {', '.join(_PROVIDERS)}")
    if "upstream" not in entry:
        raise ModelCatalogError(f"{where}: missing 'upstream'")
    responses = entry.get("responses", False)
    if not isinstance(responses, bool) or (responses and protocol != "openai"):
        raise ModelCatalogError(f"{where}.responses: true or false, and only on an openai channel")
    return Channel(
        cast(Protocol, protocol),
        provider,
        str(entry["upstream"]),
        str(entry.get("base_path", "")),
        responses,
    )


def _prices(raw: Any, where: str) -> Prices | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ModelCatalogError(f"{where}: expected a mapping of input, output, cached")
    try:
        values = {k: Decimal(str(raw[k])) for k in ("input", "output")}
        cached = Decimal(str(raw.get("cached", raw["input"])))
        write = Decimal(str(raw.get("cache_write", raw["input"])))
    except KeyError as exc:
        raise ModelCatalogError(f"{where}: missing {exc.args[0]!r}") from exc
    except InvalidOperation as exc:
        raise ModelCatalogError(f"{where}: prices must be numbers") from exc
    if any(v < 0 for v in (*values.values(), cached, write)):
        raise ModelCatalogError(f"{where}: prices cannot be negative")
    return Prices(values["input"], values["output"], cached, write)


def _model(entry: Any, where: str) -> ModelInfo:
    if not isinstance(entry, dict):
        raise ModelCatalogError(f"{where}: expected a mapping")
    try:
        efforts = tuple(str(e) for e in entry.get("efforts", ()))
        unknown = [e for e in efforts if e not in _EFFORT_LEVELS]
        if unknown:
            raise ModelCatalogError(f"{where}.efforts: unknown levels {unknown}")
        upstream = str(entry.get("upstream", str(entry["id"]).split("/")[-1]))
        raw_channels = entry.get("channels")
        if raw_channels is None:
            channels: tuple[Channel, ...] = (Channel("anthropic", "anthropic", upstream),)
        elif isinstance(raw_channels, list):
            channels = tuple(_channel(c, f"{where}.channels[{j}]") for j, c in enumerate(raw_channels))
        else:
            raise ModelCatalogError(f"{where}.channels: expected a list")
        info = ModelInfo(
            id=str(entry["id"]),
            upstream=channels[0].upstream if channels else upstream,
            created=int(entry.get("created", 0)),
            vision=bool(entry.get("vision", False)),
            caching=bool(entry.get("caching", False)),
            sampling=bool(entry.get("sampling", False)),
            efforts=efforts,
            forced_tool_choice=bool(entry.get("forced_tool_choice", True)),
            max_output_tokens=int(entry["max_output_tokens"]),
            channels=channels,
            enabled=bool(entry.get("enabled", True)),
            apis=tuple(str(a) for a in entry.get("apis", (CHAT_COMPLETIONS,))),
            prices=_prices(entry.get("prices"), f"{where}.prices"),
            fallbacks=tuple(str(f) for f in entry.get("fallbacks", ())),
        )
    except KeyError as exc:
        raise ModelCatalogError(f"{where}: missing {exc.args[0]!r}") from exc
    except (TypeError, ValueError) as exc:
        if isinstance(exc, ModelCatalogError):
            raise
        raise ModelCatalogError(f"{where}: {exc}") from exc
    if info.max_output_tokens <= 0:
        raise ModelCatalogError(f"{where}.max_output_tokens: must be positive")
    return info


def parse_catalog(text: str) -> ModelCatalog:
    # Imported here so that the pure translators, which use `ModelInfo`, do not pull in yaml.
    import yaml

    data = yaml.safe_load(text)
    if not isinstance(data, dict) or not isinstance(data.get("models"), list):
        raise ModelCatalogError("the catalog needs a top-level `models:` list")
    models: dict[str, ModelInfo] = {}
    for i, entry in enumerate(data["models"]):
        info = _model(entry, f"models[{i}]")
        if info.id in models:
            raise ModelCatalogError(f"models[{i}]: duplicate id {info.id!r}")
        models[info.id] = info
    for info in models.values():
        unknown = [f for f in info.fallbacks if f not in models or f == info.id]
        if unknown:
            raise ModelCatalogError(f"{info.id}.fallbacks: not other ids of this catalog: {unknown}")
    default = data.get("default_model")
    if default is not None and str(default) not in models:
        raise ModelCatalogError(f"default_model: {default!r} is not in the catalog")
    return ModelCatalog(MappingProxyType(models), str(default) if default is not None else None)


def load_catalog(path: str | Path | None = None, *, shipped: str = "models.yaml") -> ModelCatalog:
    """The catalog from `path`, or the one shipped with the package under the name `shipped`."""
    if path is None:
        text = resources.files("reference_gateway").joinpath(shipped).read_text(encoding="utf-8")
    else:
        text = Path(path).read_text(encoding="utf-8")
    return parse_catalog(text)
