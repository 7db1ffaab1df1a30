#!/usr/bin/env python3
"""Sign in to a running `claude gateway` the way Claude Code does (RFC 8628 device flow, the gateway's protocol
"Flow" section), playing both the client and the developer's browser, and print the gateway's bearer token.

  1. GET  {base}/.well-known/oauth-authorization-server      -> device_authorization_endpoint, token_endpoint
  2. POST device_authorization_endpoint  surface=claude_code -> device_code, user_code, verification_uri
  3. the "browser": GET verification_uri, POST /device user_code=... (same-origin Origin header, as a browser
     sends it), follow the redirects: the IdP (oidc_stub.py) approves at once and sends the browser back to
     {base}/oauth/callback, where the gateway marks the device code approved
  4. POST token_endpoint grant_type=urn:ietf:params:oauth:grant-type:device_code -> access_token

usage: signin.py BASE_URL   (e.g. http://127.0.0.1:3480); the token goes to stdout, nothing else does.
"""

from __future__ import annotations

import http.cookiejar
import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

BASE = sys.argv[1].rstrip("/")
UA = {"user-agent": "claude-code/2.1.332 (gateway-conformance peer sign-in)"}


def post_form(url: str, form: dict, opener=None, headers=None) -> tuple[int, bytes]:
    req = urllib.request.Request(url, urllib.parse.urlencode(form).encode(), {**UA, **(headers or {})})
    try:
        with (opener or urllib.request.build_opener()).open(req, timeout=30) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


meta = json.load(urllib.request.urlopen(urllib.request.Request(f"{BASE}/.well-known/oauth-authorization-server", None, UA)))
status, raw = post_form(meta["device_authorization_endpoint"], {"surface": "claude_code"})
if status != 200:
    sys.exit(f"device authorization answered {status}: {raw[:300]!r}")
grant = json.loads(raw)

browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
browser.open(grant["verification_uri_complete"], timeout=30).read()
origin = "{0.scheme}://{0.netloc}".format(urllib.parse.urlsplit(grant["verification_uri"]))
status, page = post_form(grant["verification_uri"], {"user_code": grant["user_code"]}, browser, {"origin": origin})
if status != 200 or b"signed in" not in page:
    sys.exit(f"verification page answered {status}: {page[-400:]!r}")

deadline = time.time() + 60
while time.time() < deadline:
    status, raw = post_form(meta["token_endpoint"], {
        "grant_type": "urn:ietf:params:oauth:grant-type:device_code", "device_code": grant["device_code"]})
    answer = json.loads(raw or b"{}")
    if status == 200 and answer.get("access_token"):
        print(answer["access_token"])
        sys.exit(0)
    if answer.get("error") not in ("authorization_pending", "slow_down"):
        sys.exit(f"token endpoint answered {status}: {raw[:300]!r}")
    time.sleep(1)
sys.exit("no token within 60 s")
