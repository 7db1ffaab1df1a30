"""The harness's exceptions: one base, so a fault of the suite is never mistaken for a gateway's.

    HarnessError                 anything the suite itself could not do
    ├── ConfigError              bad configuration from the user: exit 3 with this message
    │   ├── SpecError            a rule or profile file that does not load (harness.spec.loader)
    │   ├── EmptySelection       a run that would judge no rule at all (harness.spec.selection)
    │   ├── ExpectationsError    a malformed vendor expectations file (harness.expectations)
    │   ├── ModelMapError        a model map that does not load or names unknown roles (harness.modelmap)
    │   ├── PreflightError       a gateway URL or key no rule could judge (harness.orchestrate.preflight)
    │   ├── CatalogError         a malformed mutants catalog (harness.mutants.catalog)
    │   ├── OpError              an edit or stream op outside the mutation vocabulary (harness.mutants.ops)
    │   ├── FuzzConfigError      a fuzz run that cannot start as asked (harness.fuzz)
    │   ├── BadResults           a results file `report` cannot render (harness.report)
    │   ├── BadReport            a conformance report that cannot be read (harness.conformance.publish)
    │   ├── ScenarioError        a client scenario file that does not load (harness.clients.scenarios)
    │   └── ReplayConfigError    a case registration the replay upstream cannot honour (harness.replay.state)
    ├── HarnessFailure           the suite could not do its job (a child run, the embedded gateway): exit 2
    │   └── ReplayError          the replay upstream did not answer its control API as documented
    ├── CassetteError            a cassette that does not load or validate (harness.cassette.document)
    │   └── DeriveError          a recorded stream that cannot be assembled into its answer (harness.record.derive)
    ├── ProviderError            a provider refused, failed or did not answer `record` (harness.record.providers)
    └── CheckError               rule data a check cannot evaluate, found while judging
        ├── PathError            a JSONPath that does not parse
        ├── ExprError            a usage formula that does not parse or evaluate
        └── RefError             a `${...}` reference that names nothing

Not faults of the suite, so deliberately outside HarnessError (NOT_HARNESS_ERRORS), drawn here so that every
exception class has its place:

    RuleFailure                  a rule variant failed: the gateway's fault, how a pytest item says so
    SimulatorRequestError        a request the simulated provider refuses: answered as that provider's 400
    DeliberateDrop               the replay upstream cutting a connection on purpose (a scripted fault)
    ShrinkStillFails             inside hypothesis's shrinker: this smaller case still fails (harness.fuzz.shrink)
    ShrinkOutOfTime              the shrinker's time is up: keep the smallest failure so far (harness.fuzz.shrink)

The runner turns any HarnessError raised while running a rule into HARNESS_ERROR with its message; any
other exception there is a bug of the suite and is reported as HARNESS_ERROR with its traceback.
"""

from __future__ import annotations

NOT_HARNESS_ERRORS = frozenset(
    {"RuleFailure", "SimulatorRequestError", "DeliberateDrop", "ShrinkStillFails", "ShrinkOutOfTime"}
)


class HarnessError(Exception):
    """Base of every exception the harness raises on purpose."""


class ConfigError(HarnessError):
    """Bad configuration: exit 3 with this message."""


class HarnessFailure(HarnessError):
    """The suite itself could not do its job: exit 2 with this message."""


class CheckError(HarnessError):
    """Rule data that a check cannot evaluate (the rule's fault, not the gateway's)."""


class FuzzConfigError(ConfigError):
    """A fuzz run that cannot start as asked: exit 3."""
