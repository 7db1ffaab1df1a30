#!/usr/bin/env bash
# Install Claude Code 2.1.332 (npm @anthropic-ai/claude-code, the version harness/clients/node's lock pins) into
# $PEER_DIR. `claude gateway` is a subcommand of its native binary, which npm brings as the optional dependency
# @anthropic-ai/claude-code-<platform> (linux-x64 here); the package's postinstall links it over bin/claude.exe.
# npm warns EBADENGINE under Node 20 (the wrapper asks for >= 22): the native binary does not run on Node.
set -e
PEER_DIR=${PEER_DIR:?set PEER_DIR to the folder to install into}
mkdir -p "$PEER_DIR"
cd "$PEER_DIR"
[ -f package.json ] || echo '{"private": true}' > package.json
npm install --no-audit --no-fund --save-exact @anthropic-ai/claude-code@2.1.332
bin=node_modules/@anthropic-ai/claude-code/bin/claude.exe
if ! HOME="$PEER_DIR/home" "$bin" --version >/dev/null 2>&1; then
  # the postinstall did not run (npm's allow-scripts): run it, it only copies the platform binary into place
  (cd node_modules/@anthropic-ai/claude-code && node install.cjs)
fi
mkdir -p "$PEER_DIR/home"
HOME="$PEER_DIR/home" "$bin" --version
