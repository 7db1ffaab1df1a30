#!/usr/bin/env python3
"""A loopback stand-in for a corporate identity provider (OIDC), enough for `claude gateway` to sign a developer in.

Serves on 127.0.0.1 only:
  GET  /.well-known/openid-configuration   the discovery document
  GET  /jwks                               the RS256 public key (a fresh key per start, never stored)
  GET  /authorize                          auto-approves: redirects to redirect_uri with a code and the state
  POST /token                              authorization_code (PKCE S256 checked) and refresh_token grants:
                                           an RS256 id_token with sub, email, groups, aud=client_id, nonce
  GET  /userinfo                           the same claims

One fixed test user (gc-tester / gc-tester@example.test, group gc-developers). Nothing real is signed in.
usage: oidc_stub.py PORT
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

PORT = int(sys.argv[1]) if len(sys.argv) > 1 else 3481
ISSUER = f"http://127.0.0.1:{PORT}"
KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
KID = "gc-stub-1"
USER = {"sub": "gc-tester", "email": "gc-tester@example.test", "email_verified": True, "name": "GC Tester",
        "groups": ["gc-developers"]}
CODES: dict[str, dict] = {}


def _b64(n: int) -> str:
    raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def jwks() -> dict:
    pub = KEY.public_key().public_numbers()
    return {"keys": [{"kty": "RSA", "use": "sig", "alg": "RS256", "kid": KID, "n": _b64(pub.n), "e": _b64(pub.e)}]}


def discovery() -> dict:
    return {
        "issuer": ISSUER,
        "authorization_endpoint": f"{ISSUER}/authorize",
        "token_endpoint": f"{ISSUER}/token",
        "jwks_uri": f"{ISSUER}/jwks",
        "userinfo_endpoint": f"{ISSUER}/userinfo",
        "response_types_supported": ["code"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256"],
        "scopes_supported": ["openid", "email", "profile", "groups", "offline_access"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
        "code_challenge_methods_supported": ["S256"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "claims_supported": ["sub", "email", "groups", "name"],
    }


def id_token(client_id: str, nonce: str | None) -> str:
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": client_id, "iat": now, "exp": now + 3600, "auth_time": now, **USER}
    if nonce:
        claims["nonce"] = nonce
    return jwt.encode(claims, KEY, algorithm="RS256", headers={"kid": KID})


class Handler(BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):  # one line per request on stderr
        sys.stderr.write("oidc-stub %s\n" % (fmt % args))

    def _json(self, status: int, obj: dict) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("cache-control", "no-store")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        url = urlsplit(self.path)
        q = {k: v[0] for k, v in parse_qs(url.query).items()}
        if url.path == "/.well-known/openid-configuration":
            return self._json(200, discovery())
        if url.path == "/jwks":
            return self._json(200, jwks())
        if url.path == "/userinfo":
            return self._json(200, USER)
        if url.path == "/authorize":
            if q.get("response_type") != "code" or "redirect_uri" not in q:
                return self._json(400, {"error": "invalid_request"})
            code = secrets.token_urlsafe(24)
            CODES[code] = {"client_id": q.get("client_id", ""), "nonce": q.get("nonce"),
                           "challenge": q.get("code_challenge"), "redirect_uri": q["redirect_uri"]}
            params = {"code": code}
            if "state" in q:
                params["state"] = q["state"]
            sep = "&" if "?" in q["redirect_uri"] else "?"
            self.send_response(302)
            self.send_header("location", q["redirect_uri"] + sep + urlencode(params))
            self.send_header("content-length", "0")
            self.end_headers()
            return None
        return self._json(404, {"error": "not_found"})

    def do_POST(self):
        url = urlsplit(self.path)
        length = int(self.headers.get("content-length") or 0)
        form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
        if url.path != "/token":
            return self._json(404, {"error": "not_found"})
        client_id = form.get("client_id")
        auth = self.headers.get("authorization", "")
        if auth.lower().startswith("basic "):
            client_id = base64.b64decode(auth[6:]).decode().split(":", 1)[0]
        grant = form.get("grant_type")
        if grant == "authorization_code":
            entry = CODES.pop(form.get("code", ""), None)
            if entry is None:
                return self._json(400, {"error": "invalid_grant"})
            if entry["challenge"]:
                verifier = form.get("code_verifier", "")
                digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
                if digest != entry["challenge"]:
                    return self._json(400, {"error": "invalid_grant", "error_description": "PKCE mismatch"})
            cid, nonce = entry["client_id"] or client_id or "", entry["nonce"]
        elif grant == "refresh_token":
            cid, nonce = client_id or "", None
        else:
            return self._json(400, {"error": "unsupported_grant_type"})
        return self._json(200, {"access_token": secrets.token_urlsafe(24), "token_type": "Bearer", "expires_in": 3600,
                                "id_token": id_token(cid, nonce), "refresh_token": secrets.token_urlsafe(24),
                                "scope": "openid email profile"})


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
