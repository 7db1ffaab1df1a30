#!/usr/bin/env bash
# Run every reproduction in this folder, one at a time; print each script's output and exit code
# (1 = the behaviour is present, 0 = not present, 2 = the script itself failed).
cd "$(dirname "$0")" || exit 2
for f in $(ls *.py | grep -v '^stub.py$'); do
  echo "=== python3 $f"; python3 "$f"; echo "exit $?"
done
