"""The harness's exceptions, every one defined here: one base, so a fault of the suite is never mistaken for a
gateway's, and one name per meaning.

    HarnessError                 anything the suite itself could not do
    ├── ConfigError              bad configuration from the user: exit 3 with this message
    │   ├── SpecError            a rule or profile file that does not load (harness.spec.loader)
    │   ├── RuleCatalogError     rule files that do not load, every problem named (harness.spec.collection)
    │   ├── EmptySelection       a run that would judge no rule at all (harness.spec.selection)
    │   ├── ExpectationsError    a malformed vendor expectations file (harness.expectations)
    │   ├── ModelMapError        a model map that does not load or names unknown roles (harness.modelmap)
    │   ├── PreflightError       a gateway URL or key no rule could judge (harness.orchestrate.preflight)
    │   ├── MutantCatalogError   a malformed mutants catalog (harness.mutants.catalog)
    │   ├── OpError              an edit or stream op outside the mutation vocabulary (harness.mutants.ops)
    │   ├── FuzzConfigError      a fuzz run that cannot start as asked (harness.fuzz)
    │   ├── BadResults           a results file `report` cannot render (harness.report)
    │   ├── BadReport            a conformance report that cannot be read (harness.conformance.publish)
    │   ├── ScenarioError        a client scenario file that does not load (harness.clients.scenarios)
    │   └── ReplayConfigError    a case registration the replay upstream cannot honour (harness.replay.state)
    ├── HarnessFailure           the suite could not do its job (a child run, the embedded gateway): exit 2
    │   ├── ReplayError          the replay upstream did not answer its control API as documented
    │   └── GatewayUnavailable   the gateway does not answer its API at all (an outage): no verdict, exit 2
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
    Interrupted                  SIGINT or SIGTERM: the run stops, keeps what it judged, exits 128 + the signal
    ShrinkStillFails             inside hypothesis's shrinker: this smaller case still fails (harness.fuzz.shrink)
    ShrinkOutOfTime              the shrinker's time is up: keep the smallest failure so far (harness.fuzz.shrink)
    InBandError                  a WebSocket turn's `error` event, raised as an application would (harness.clients)

The runner turns any HarnessError raised while running a rule into HARNESS_ERROR with its message; any
other exception there is a bug of the suite and is reported as HARNESS_ERROR with its traceback.
Pure: this module imports nothing of the harness, so every package can raise what it needs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

NOT_HARNESS_ERRORS = frozenset(
    {
        "RuleFailure",
        "SimulatorRequestError",
        "DeliberateDrop",
        "ShrinkStillFails",
        "ShrinkOutOfTime",
        "InBandError",
    }
)


class HarnessError(Exception):
    """Base of every exception the harness raises on purpose."""


class ConfigError(HarnessError):
    """Bad configuration: exit 3 with this message."""


class HarnessFailure(HarnessError):
    """The suite itself could not do its job: exit 2 with this message."""


class CheckError(HarnessError):
    """Rule data that a check cannot evaluate (the rule's fault, not the gateway's)."""


# --- bad configuration ------------------------------------------------------------------------------------


class SpecError(ConfigError):
    """A rule or profile file that cannot be used. `str()` is `file:line: problem`."""

    def __init__(self, file: str, line: int, problem: str) -> None:
        super().__init__(f"{file}:{line}: {problem}")
        self.file = file
        self.line = line
        self.problem = problem


class _Problem(Protocol):
    """One problem of a rule file (harness.spec.collection.CatalogProblem)."""

    @property
    def file(self) -> str: ...

    def text(self) -> str: ...


class RuleCatalogError(ConfigError):
    """Rule files that do not load; `str()` names every problem, one per line."""

    def __init__(self, problems: Iterable[_Problem]) -> None:
        self.problems = tuple(problems)
        files = len({p.file for p in self.problems})
        head = (
            f"the rule catalog does not load ({len(self.problems)} problem(s) in {files} file(s)); "
            "nothing was run"
        )
        super().__init__("\n".join([head, *(p.text() for p in self.problems)]))

    def lines(self) -> list[str]:
        return str(self).splitlines()


class EmptySelection(ConfigError):
    """The run would judge no rule at all."""


class ExpectationsError(ConfigError):
    """An expectations file that cannot be used (bad configuration)."""


class ModelMapError(ConfigError):
    """A model map that cannot be used."""


class PreflightError(ConfigError):
    """The gateway URL or key is wrong: nothing a rule could judge."""


class MutantCatalogError(ConfigError):
    """The mutant catalog is malformed (a bad op, an unknown key, a duplicate id)."""


class OpError(ConfigError, ValueError):
    """A mutation definition outside the vocabulary (raised while loading the catalog, never at run time)."""


class FuzzConfigError(ConfigError):
    """A fuzz run that cannot start as asked: exit 3."""


class BadResults(ConfigError):
    """A results file that cannot be rendered: exit 3 with this message."""


class BadReport(ConfigError):
    """A file that is not a readable conformance report (exit 3)."""


class ScenarioError(ConfigError):
    """specs/clients/scenarios.yaml does not say what a scenario needs."""


class ReplayConfigError(ConfigError):
    """A case registration the replay upstream cannot honour (bad upstream block, unusable cassette)."""


# --- the suite could not do its job -----------------------------------------------------------------------


class ReplayError(HarnessFailure):
    """The replay upstream refused a request, answered nonsense, or could not be reached."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class GatewayUnavailable(HarnessFailure):
    """The gateway did not answer its API at all before any rule ran (no answer in time, the connection cut, a
    proxy's error page): an outage is not a verdict (harness.orchestrate.preflight)."""


class CassetteError(HarnessError):
    """A cassette that cannot be used: missing, unreadable, wrong version, bad provenance, or holding a secret."""

    def __init__(self, file: str | Path, problem: str) -> None:
        self.file = str(file)
        self.problem = problem
        super().__init__(f"{self.file}: {problem}")


class DeriveError(CassetteError, ValueError):
    """The stream cannot be assembled into an answer (it is not the family's stream, or it is cut short)."""

    def __init__(self, problem: str, file: str | Path = "the recorded stream") -> None:
        super().__init__(file, problem)


class ProviderError(HarnessError):
    """The provider refused or failed one request (HTTP status, its error type) or could not be reached."""

    def __init__(self, status: int | None, error_type: str | None, message: str) -> None:
        self.status = status
        self.error_type = error_type
        self.message = message
        super().__init__(message)


# --- rule data a check cannot evaluate --------------------------------------------------------------------


class PathError(CheckError):
    """A JSONPath that does not parse."""


class ExprError(CheckError):
    """The expression is outside the grammar, or a name has no integer value."""


class RefError(CheckError):
    """A reference that names nothing in this exchange."""


# --- not faults of the suite ------------------------------------------------------------------------------


class RuleFailure(Exception):
    """Raised by a RuleItem whose rule failed; carries the readable account."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


class SimulatorRequestError(ValueError):
    """A request the provider would refuse with a 400 (the message says why; no prompt text in it)."""


class DeliberateDrop(Exception):
    """Raised to make uvicorn close the connection mid-body (drop_after_bytes): no chunked terminator."""


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM (what Ctrl-C, `timeout` and a CI cancel send), raised in the main thread: the run stops its
    children, writes what it judged so far marked `interrupted` and exits 128 + `signum` (harness.orchestrate.processes).
    A KeyboardInterrupt, so that whatever cleans up after Ctrl-C cleans up after SIGTERM too."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum
        self.where: str | None = None  # the report folder that holds what was judged so far, if any
        self.judged = 0  # the rule variants judged before it


class ShrinkStillFails(Exception):
    """Raised inside hypothesis for a case that breaks one of the original invariants."""


class ShrinkOutOfTime(BaseException):
    """Ends hypothesis's run from inside the test (a BaseException: hypothesis does not catch it as a failure)."""


class InBandError(RuntimeError):
    """A Responses WebSocket turn's `error` event, raised as an application raises it (openai-python yields the event;
    the client drivers raise it so the library's answer is an error observation, named by the event's status)."""

    def __init__(self, event: Mapping[str, Any]) -> None:
        super().__init__(f"WebSocket error event: {json.dumps(dict(event), default=str)[:400]}")
        self.event = dict(event)
