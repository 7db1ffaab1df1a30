#!/usr/bin/env bash
# Install Shepherd Model Gateway (SMG) 1.13.0, PyPI `smg` (a Rust binary in a manylinux wheel; the former
# sglang-router), into the venv $PEER_VENV. Idempotent: a venv that already has smg 1.13.0 is left as it is.
set -e
PEER_VENV=${PEER_VENV:?set PEER_VENV to the venv folder to install into}
if [ -x "$PEER_VENV/bin/smg" ] && "$PEER_VENV/bin/pip" show smg 2>/dev/null | grep -qx 'Version: 1.13.0'; then
  exit 0
fi
python3 -m venv "$PEER_VENV"
"$PEER_VENV/bin/pip" install -q 'smg==1.13.0'
