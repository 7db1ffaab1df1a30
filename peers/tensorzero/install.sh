#!/usr/bin/env bash
# Install the TensorZero gateway 2026.6.0 (PyPI `tensorzero`: the Python client whose wheel embeds the Rust gateway)
# into the venv $PEER_VENV. Idempotent: an existing venv with that version is left as it is.
set -e
PEER_VENV=${PEER_VENV:?set PEER_VENV}
if [ -x "$PEER_VENV/bin/python" ] && "$PEER_VENV/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(m.version("tensorzero") != "2026.6.0")' 2>/dev/null; then
  exit 0
fi
python3 -m venv "$PEER_VENV"
"$PEER_VENV/bin/pip" install -q 'tensorzero==2026.6.0'
"$PEER_VENV/bin/python" -c 'import tensorzero; print("tensorzero", tensorzero.__version__)'
