"""Installed the way npm resolves Portkey's declared range (`npm install @portkey-ai/gateway@1.15.2`: @hono/node-server
1.19.x), every STREAMED answer is 500 {"status":"failure","message":"Something went wrong"} (log: TypeError: immutable);
non-streamed answers work. With @hono/node-server 1.14.1 (peers/portkey/install.sh) streams work.

The install's, not Portkey's code: Portkey-AI/gateway#1389. No rule id of its own: on that install every streaming
rule fails; the stored runs pin 1.14.1 and say so. The default install goes to /tmp/gc-repro-portkey-hono (env HONO_DIR).
"""
import json, os, subprocess, glob
from stub import NATIVE, Stub, gateway, http, short, verdict

HONO_DIR = os.environ.get("HONO_DIR", "/tmp/gc-repro-portkey-hono")
PINNED = os.environ.get("PEER_DIR", "/tmp/gc-peers/portkey")
if not os.path.isdir(f"{HONO_DIR}/node_modules/@portkey-ai/gateway"):
    os.makedirs(HONO_DIR, exist_ok=True)
    if not os.path.exists(f"{HONO_DIR}/package.json"):
        open(f"{HONO_DIR}/package.json", "w").write('{"private": true}\n')
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", "@portkey-ai/gateway@1.15.2"], cwd=HONO_DIR,
                   check=True, capture_output=True)

def hono(d):
    return json.load(open(f"{d}/node_modules/@hono/node-server/package.json"))["version"]

def run(peer_dir):
    stub, res = Stub(), {}
    msg = {"model": "claude-sonnet-4-5-20250929", "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]}
    with gateway(stub, peer_dir) as gw:
        res["/v1/messages stream"] = http("POST", gw + "/v1/messages", dict(msg, stream=True), {"anthropic-version": "2023-06-01"})
        res["/v1/chat/completions stream"] = http("POST", gw + "/v1/chat/completions", dict(msg, stream=True))
        res["/v1/responses stream (native)"] = http("POST", gw + "/v1/responses", {"model": "gpt-5.5", "input": "hi",
                                                     "stream": True}, NATIVE)
        res["/v1/messages (not streamed)"] = http("POST", gw + "/v1/messages", msg, {"anthropic-version": "2023-06-01"})
        log = open(glob.glob(f"/tmp/gc-repro-portkey/state-{gw.rsplit(':', 1)[1]}/proxy.log")[0]).read()
    return res, "TypeError: immutable" in log

out = {}
for name, d in (("npm default", HONO_DIR), ("pinned", PINNED)):
    res, immutable = run(d)
    out[name] = res
    print(f"{name} install ({d}): @hono/node-server {hono(d)}; log has 'TypeError: immutable': {immutable}")
    for k, (st, h, b) in res.items(): print(f"  {k}: {st} {short(b, 70) if st != 200 else h.get('Content-Type', h.get('content-type'))}")
verdict(any(st == 500 for k, (st, _, _) in out["npm default"].items() if "stream" in k and "not" not in k),
        "with npm's default @hono/node-server every stream is a 500")
