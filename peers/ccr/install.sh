#!/usr/bin/env bash
# Install Claude Code Router 2.0.0 (npm @musistudio/claude-code-router, a self-contained bundle: dist/cli.js with
# the server, its transformer library @musistudio/llms 1.0.51 and the web UI inlined; no dependencies) into $PEER_DIR.
# 3.x does not install here; 2.0.0 is the newest 2.x.
set -e
PEER_DIR=${PEER_DIR:?set PEER_DIR to the folder to install into}
mkdir -p "$PEER_DIR"
cd "$PEER_DIR"
[ -f package.json ] || echo '{"private": true}' > package.json
npm install --no-audit --no-fund --save-exact @musistudio/claude-code-router@2.0.0
test -f node_modules/@musistudio/claude-code-router/dist/cli.js
npm ls @musistudio/claude-code-router
