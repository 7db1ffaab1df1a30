"""`python -m harness.fuzz`: the same as `gateway-conformance fuzz`."""

import sys

from harness.fuzz import main

sys.exit(main())
