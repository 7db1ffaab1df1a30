#!/usr/bin/env python3
"""Claim: the gateway's own GET /v1/models is not Anthropic's List Models page: entries lack created_at, first_id and
last_id are null, and `limit` is ignored (limit=1 answers every model).

Expected (Anthropic API › Models › List Models): {data: [{type, id, display_name, created_at}], has_more,
first_id, last_id}, at most `limit` entries. Exit 1 while any of these is missing.
Run: python3 models_list_shape.py   (starts the gateway with peers/claude-gateway/run_peer.sh, stops it)
"""
import sys

import anthropic

from common import Stub, call, ok_answer, start_gateway, stop_gateway

stub = Stub(ok_answer)
token = start_gateway(stub.url)
try:
    got, _, data = call("GET", "/v1/models?limit=1", {"authorization": f"Bearer {token}", "anthropic-version": "2023-06-01"})
    first = (data.get("data") or [{}])[0]
    problems = [k for k in ("first_id", "last_id") if not isinstance(data.get(k), str)]
    problems += ["has_more"] if not isinstance(data.get("has_more"), bool) else []
    problems += ["data[0].created_at"] if not isinstance(first.get("created_at"), str) else []
    problems += [f"limit=1 answered {len(data.get('data', []))} models"] if len(data.get("data", [])) != 1 else []
    print(f"GET /v1/models?limit=1 -> {got}; page {({k: v for k, v in data.items() if k != 'data'})}; first entry {first}")
    print(f"expected Anthropic's page; missing or wrong: {problems or 'nothing'}")
    page = anthropic.Anthropic(base_url="http://127.0.0.1:3480", auth_token=token).models.list(limit=1)
    print(f"anthropic SDK models.list(limit=1): {len(page.data)} models, created_at={page.data[0].created_at!r}, "
          f"first_id={page.first_id!r}, has_more={page.has_more!r}")
    present = bool(problems)
finally:
    stop_gateway()
    stub.close()
print("behaviour present" if present else "fixed")
sys.exit(1 if present else 0)
