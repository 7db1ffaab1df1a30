"""`python -m harness.fuzz`: the fuzz command before it is wired into `gateway-conformance`."""

import sys

from harness.fuzz import main

sys.exit(main())
