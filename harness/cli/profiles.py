"""A gateway's profile: `roles` (its model roles and a model map draft), `new-profile` and `lint-specs`
(your own gateway's profile)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from harness.errors import ConfigError
from harness.outcomes import EXIT_FAILURES, EXIT_OK, KEY_ENV


def _roles_parser(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "roles",
        help="list a profile's model roles and optional features; draft a model map",
        description="List the model roles ($MODEL, ...) a profile's rules use and the optional features "
        "they can declare, with what each means. With --write-model-map FILE --gateway-url URL: draft a "
        "model map from the gateway's GET /models.",
    )
    p.add_argument("--profile", required=True, metavar="NAME", help="whose roles and features to list")
    p.add_argument(
        "--specs-dir", metavar="DIR", help="read the profile from DIR (default: the bundled specs/)"
    )
    p.add_argument(
        "--write-model-map", metavar="FILE", type=Path, help="write a draft model map (needs --gateway-url)"
    )
    p.add_argument("--gateway-url", metavar="URL", help="the gateway's OpenAI base URL (for GET URL/models)")
    p.add_argument("--gateway-key", metavar="KEY", help=f"the gateway's API key (default: ${KEY_ENV})")
    p.set_defaults(func=roles)


def _listed_models(args: argparse.Namespace) -> list[str]:
    """The ids the gateway lists (GET URL/models) for --write-model-map; a ConfigError before anything prints."""
    from harness.modelmap import list_models
    from harness.orchestrate.preflight import check_url

    if not args.gateway_url:
        raise ConfigError("--write-model-map needs --gateway-url (the map is drafted from GET <URL>/models)")
    check_url(args.gateway_url)
    return list_models(args.gateway_url.rstrip("/") + "/models", args.gateway_key or os.environ.get(KEY_ENV))


def roles(args: argparse.Namespace) -> int:
    from harness.paths import specs_root
    from harness.spec import load_profile

    profile = load_profile(args.profile, specs_root(args.specs_dir))
    ids = (
        _listed_models(args) if args.write_model_map is not None else []
    )  # a dead URL errors before the listing
    print(f"profile {profile.name}: {profile.title}")
    print(f"  doc: {profile.doc}" + (f"; base path {profile.base_path}" if profile.base_path else ""))
    print(
        "\nmodel roles (map them to your ids with --model-map FILE; null makes a role's rules NOT_APPLICABLE):"
    )
    for role, spec in sorted(profile.models.items()):
        print(f"  {role:<22} default {spec.default}\n  {'':<22} {spec.description}")
    print("\noptional features (declare the ones your gateway has or your run allows with --feature NAME):")
    for name, meaning in sorted(profile.features.items()):
        print(f"  {name:<22} {meaning}")
    if not profile.features:
        print("  (none)")
    if args.write_model_map is None:
        return EXIT_OK
    from harness.modelmap import draft_model_map

    url = args.gateway_url.rstrip("/") + "/models"
    try:
        args.write_model_map.write_text(draft_model_map(profile, ids, f"GET {url}"), encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write {args.write_model_map}: {exc}") from exc
    print(
        f"\nwrote a draft model map to {args.write_model_map} ({len(ids)} model ids listed); check each TODO"
    )
    return EXIT_OK


def _new_profile_parser(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "new-profile",
        help="scaffold a profile for your own gateway's docs (run it with --specs-dir)",
        description="Write DIR/NAME/profile.yaml, a first rule file, DIR/coverage/NAME.yaml (every sentence "
        "of the doc, each still to map) and a copy of the doc under DIR/docs/. Then write rules, map the "
        "sentences, check with `lint-specs --specs-dir DIR`, and run with `certify --specs-dir DIR`.",
    )
    p.add_argument("name", metavar="NAME", help="the profile name (lowercase letters, digits, dashes)")
    p.add_argument("--doc", required=True, type=Path, metavar="FILE", help="your gateway's doc (Markdown)")
    p.add_argument(
        "--specs-dir",
        type=Path,
        default=Path("specs"),
        metavar="DIR",
        help="where to write (default ./specs)",
    )
    p.set_defaults(func=new_profile)


def new_profile(args: argparse.Namespace) -> int:
    from harness.spec.scaffold import scaffold

    files = scaffold(args.name, args.doc, args.specs_dir.resolve())
    for path in files:
        print(f"wrote {path}")
    print(
        f"\nnext: map the sentences in {files[2].name}, write rules, then\n"
        f"  gateway-conformance lint-specs --specs-dir {args.specs_dir}\n"
        f"  gateway-conformance certify --specs-dir {args.specs_dir} --profile {args.name} "
        "--gateway-url URL --replay-port P"
    )
    return EXIT_OK


def _lint_specs_parser(sub: argparse._SubParsersAction[Any]) -> None:
    p = sub.add_parser(
        "lint-specs",
        help="validate a specs dir: schemas, rule ids, roles and features, ledger, quotes in the doc",
        description="Check every profile of a specs dir as the suite would use it: profile and rule files "
        "against their schemas, rule ids, declared roles and features, each rule's quote present in the doc, "
        "and the coverage ledger (quotes, rule ids, every rule listed, no sentence left to map). "
        "Exit 0 when clean, 1 with the problems listed.",
    )
    p.add_argument(
        "--specs-dir", type=Path, metavar="DIR", help="the specs dir (default: the bundled specs/)"
    )
    p.add_argument(
        "--profile", action="append", default=[], metavar="NAME", help="only this profile (repeatable)"
    )
    p.add_argument(
        "--docs-dir",
        action="append",
        default=[],
        type=Path,
        metavar="DIR",
        help="where the docs (<doc>.md) are (repeatable; default: DIR/docs and the shared docs next to it)",
    )
    p.set_defaults(func=lint_specs)


def lint_specs(args: argparse.Namespace) -> int:
    from harness.paths import specs_root
    from harness.spec.lint import lint
    from harness.spec.loader import available_profiles

    root = specs_root(args.specs_dir)
    if not root.is_dir():
        raise ConfigError(f"--specs-dir {args.specs_dir}: no such directory")
    names = args.profile or available_profiles(root)
    if not names:
        raise ConfigError(f"{root}: no profile (no <name>/profile.yaml)")
    docs = list(args.docs_dir)  # the bundled profiles ship their docs beside them (specs/<profile>/<doc>.md)
    problems = lint(root, names, docs)
    for problem in problems:
        print(problem)
    print(f"{len(names)} profile(s) checked under {root}: {len(problems) or 'no'} problem(s)")
    return EXIT_FAILURES if problems else EXIT_OK


def add_parsers(sub: argparse._SubParsersAction[Any]) -> None:
    _roles_parser(sub)
    _new_profile_parser(sub)
    _lint_specs_parser(sub)
