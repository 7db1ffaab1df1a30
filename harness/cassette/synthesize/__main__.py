"""`python -m harness.cassette.synthesize`: regenerate (or, with --check, compare) the synthesized cassettes."""

from __future__ import annotations

from harness.cassette.synthesize.build import main

raise SystemExit(main())
