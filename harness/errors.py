"""The harness's exceptions: one base, so a fault of the suite is never mistaken for a gateway's.

    HarnessError                 anything the suite itself could not do
    ├── ConfigError              bad configuration from the user: exit 3 with this message
    │   ├── SpecError            a rule or profile file that does not load (harness.spec)
    │   ├── ExpectationsError    a malformed vendor expectations file
    │   ├── CatalogError         a malformed mutants catalog
    │   ├── BadResults           a results file `report` cannot render
    │   ├── BadReport            a conformance report that cannot be read (harness.report.publish)
    │   └── ReplayConfigError    a case registration the replay upstream cannot honour
    ├── HarnessFailure           the suite could not do its job (a child run, the embedded gateway): exit 2
    │   └── ReplayError          the replay upstream did not answer its control API as documented
    ├── CassetteError            a cassette that does not load or validate (harness.replay.cassette)
    └── CheckError               rule data a check cannot evaluate, found while judging
        ├── PathError            a JSONPath that does not parse
        ├── ExprError            a usage formula that does not parse or evaluate
        └── RefError             a `${...}` reference that names nothing

The runner turns any HarnessError raised while running a rule into HARNESS_ERROR with its message; any
other exception there is a bug of the suite and is reported as HARNESS_ERROR with its traceback.
"""

from __future__ import annotations


class HarnessError(Exception):
    """Base of every exception the harness raises on purpose."""


class ConfigError(HarnessError):
    """Bad configuration: exit 3 with this message."""


class HarnessFailure(HarnessError):
    """The suite itself could not do its job: exit 2 with this message."""


class CheckError(HarnessError):
    """Rule data that a check cannot evaluate (the rule's fault, not the gateway's)."""
