"""`python -m harness.cli`: the `gateway-conformance` command."""

from __future__ import annotations

import sys

from harness.cli import main

sys.exit(main())
