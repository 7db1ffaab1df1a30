"""The model catalog: which ids the gateway serves, their upstream ids and capabilities (`models.yaml`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

_EFFORT_LEVELS = ("low", "medium", "high", "xhigh", "max")


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
class Catalog:
    models: Mapping[str, ModelInfo]

    def get(self, model_id: str) -> ModelInfo | None:
        return self.models.get(model_id)


class CatalogError(ValueError):
    """The catalog file is malformed."""


def _model(entry: Any, where: str) -> ModelInfo:
    if not isinstance(entry, dict):
        raise CatalogError(f"{where}: expected a mapping")
    try:
        efforts = tuple(str(e) for e in entry.get("efforts", ()))
        unknown = [e for e in efforts if e not in _EFFORT_LEVELS]
        if unknown:
            raise CatalogError(f"{where}.efforts: unknown levels {unknown}")
        info = ModelInfo(
            id=str(entry["id"]),
            upstream=str(entry.get("upstream", str(entry["id"]).split("/")[-1])),
            created=int(entry.get("created", 0)),
            vision=bool(entry.get("vision", False)),
            caching=bool(entry.get("caching", False)),
            sampling=bool(entry.get("sampling", False)),
            efforts=efforts,
            forced_tool_choice=bool(entry.get("forced_tool_choice", True)),
            max_output_tokens=int(entry["max_output_tokens"]),
        )
    except KeyError as exc:
        raise CatalogError(f"{where}: missing {exc.args[0]!r}") from exc
    except (TypeError, ValueError) as exc:
        if isinstance(exc, CatalogError):
            raise
        raise CatalogError(f"{where}: {exc}") from exc
    if info.max_output_tokens <= 0:
        raise CatalogError(f"{where}.max_output_tokens: must be positive")
    return info


def parse_catalog(text: str) -> Catalog:
    # Imported here so that the pure translators, which use `ModelInfo`, do not pull in yaml.
    import yaml

    data = yaml.safe_load(text)
    if not isinstance(data, dict) or not isinstance(data.get("models"), list):
        raise CatalogError("the catalog needs a top-level `models:` list")
    models: dict[str, ModelInfo] = {}
    for i, entry in enumerate(data["models"]):
        info = _model(entry, f"models[{i}]")
        if info.id in models:
            raise CatalogError(f"models[{i}]: duplicate id {info.id!r}")
        models[info.id] = info
    return Catalog(MappingProxyType(models))


def load_catalog(path: str | Path | None = None) -> Catalog:
    """The catalog from `path`, or the one shipped with the package."""
    if path is None:
        text = resources.files("reference_gateway").joinpath("models.yaml").read_text(encoding="utf-8")
    else:
        text = Path(path).read_text(encoding="utf-8")
    return parse_catalog(text)
