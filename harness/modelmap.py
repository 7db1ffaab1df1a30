"""Model maps: the user's ids for a profile's model roles (`--model-map FILE`), read and drafted.

`load_model_map` raises ConfigError; `draft_model_map` is pure (the caller fetched the gateway's ids).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from harness.errors import ModelMapError
from harness.spec import Profile


def load_model_map(path: str | Path | None, profile: Profile) -> dict[str, str | None]:
    """The profile's defaults, overridden by the file's `ROLE: model-id` (null: the role's rules are N/A)."""
    import yaml

    models: dict[str, str | None] = {role: spec.default for role, spec in profile.models.items()}
    if not path:
        return models
    try:
        text = Path(path).read_text(encoding="utf-8")
        data = yaml.safe_load(text)
    except (OSError, yaml.YAMLError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ModelMapError(f"--model-map {path}: cannot read it: {first}") from exc
    if not isinstance(data, Mapping) or not all(isinstance(v, (str, type(None))) for v in data.values()):
        raise ModelMapError(f"--model-map {path}: expected a mapping of ROLE: model-id (or null)")
    unknown = sorted(str(k) for k in set(data) - set(profile.models))
    if unknown:
        from harness.names import closest

        raise ModelMapError(
            f"--model-map {path}: unknown role(s) {', '.join(unknown)}; "
            + "".join(closest(u, profile.models) for u in unknown)
            + f"profile {profile.name} has {', '.join(sorted(profile.models))} "
            f"(gateway-conformance roles --profile {profile.name})"
        )
    # A drafted map (roles --write-model-map) marks each role it could not fill with `# TODO`: like a drafted
    # expectations file, it is refused until a human has chosen (an id, or null) and deleted the mark.
    todo = [m.group(1) for m in re.finditer(r"(?m)^\s*([A-Za-z_][A-Za-z0-9_]*)\s*:[^#\n]*#\s*TODO\b", text)]
    if todo:
        raise ModelMapError(
            f"--model-map {path}: role(s) {', '.join(todo)} still hold the draft's TODO: map each to one of your "
            "gateway's model ids (or null) and delete the TODO comment"
        )
    models.update(data)
    return models


def left_out(path: str | Path | None, profile: Profile) -> dict[str, str | None]:
    """The roles a given model map leaves out, with the profile's ids they then take (issue 48: they were taken
    without a word). A role that is deliberately an id no gateway serves (UNKNOWN_MODEL) is not one to map."""
    import yaml

    if not path:
        return {}
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return {}  # load_model_map says what is wrong with it
    given = set(data) if isinstance(data, Mapping) else set()
    return {
        role: spec.default
        for role, spec in sorted(profile.models.items())
        if role not in given and not deliberately_unknown(role, spec.default or "", spec.description)
    }


def left_out_line(path: str | Path, roles: Mapping[str, str | None]) -> str:
    """What a run says about the roles its model map leaves out."""
    named = ", ".join(f"{role} ({default})" for role, default in roles.items())
    return (
        f"--model-map {path}: {named} not in it, so its rules send the profile's default ids: map each to one of "
        "your gateway's ids (or to null, leaving its rules unjudged)"
    )


def _guess(default: str, ids: Sequence[str]) -> str | None:
    """A listed id for a role's default: the default itself, or an id with the same last segment."""
    if default in ids:
        return default
    tail = default.rsplit("/", 1)[-1]
    same = [i for i in ids if i.rsplit("/", 1)[-1] == tail]
    return same[0] if len(same) == 1 else None


def deliberately_unknown(role: str, default: str, description: str) -> bool:
    """A role whose id must NOT be one the gateway serves (its rules judge the refusal): `UNKNOWN_MODEL`,
    `MODEL_NO_ROUTE` and the like. Their drafted entry keeps the default instead of asking for a listed id."""
    text = f"{role} {default} {description}".lower()
    return any(
        mark in text for mark in ("unknown", "no_route", "does-not-exist", "does not know", "no channel can")
    )


def draft_model_map(profile: Profile, ids: Sequence[str], source: str) -> str:
    """A commented YAML model map: each role's meaning, the gateway's id when one fits, TODO otherwise."""
    lines = [
        f"# Model map for profile {profile.name}, drafted from {source} ({len(ids)} model ids listed).",
        "# Map each role to one of your gateway's model ids; null makes the role's rules NOT_APPLICABLE.",
        "# Use it with --model-map FILE. Ids your gateway lists:",
        *[f"#   {i}" for i in ids],
        "",
    ]
    for role, spec in sorted(profile.models.items()):
        lines.append(f"# {role}: {spec.description}")
        guess = _guess(spec.default, ids)
        if deliberately_unknown(role, spec.default, spec.description):
            listed = spec.default in ids
            lines.append(
                f"{role}: {_scalar(spec.default)}  # keep: deliberately an id the gateway does not serve"
                + (" (but your gateway lists it: choose another unknown id)" if listed else "")
            )
            lines.append("")
            continue
        if guess is not None:
            note = (
                "listed by the gateway" if guess == spec.default else f"listed; the default is {spec.default}"
            )
            lines.append(f"{role}: {_scalar(guess)}  # {note}")
        else:
            lines.append(
                f"{role}: {_scalar(spec.default)}  # TODO: the default is not listed by the gateway; "
                "pick a listed id that fits the description, or null"
            )
        lines.append("")
    return "\n".join(lines)


def _scalar(text: str) -> str:
    import json

    return json.dumps(text)  # a JSON string is a valid YAML scalar, whatever the id holds


def list_models(url: str, key: str | None) -> list[str]:
    """The model ids a gateway lists at `url` (GET …/models, OpenAI's list format)."""
    import httpx

    headers = {"authorization": f"Bearer {key}"} if key else {}
    try:
        with httpx.Client(trust_env=False, follow_redirects=False) as client:
            response = client.get(url, headers=headers, timeout=10.0)
    except httpx.HTTPError as exc:
        raise ModelMapError(f"GET {url}: {type(exc).__name__}: {exc}") from exc
    try:
        data = response.json()["data"]
        ids = [str(item["id"]) for item in data]
    except (ValueError, KeyError, TypeError) as exc:
        raise ModelMapError(
            f"GET {url}: HTTP {response.status_code}, not an OpenAI model list ({response.text[:120]!r})"
        ) from exc
    if response.status_code != 200:
        raise ModelMapError(f"GET {url}: HTTP {response.status_code}")
    return ids
