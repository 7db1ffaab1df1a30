"""`python -m reference_gateway`: the same as the `reference-gateway` command."""

from __future__ import annotations

import sys

from reference_gateway.cli import main

sys.exit(main())
