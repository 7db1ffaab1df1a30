"""What the gateway logs and how a log line is made safe: the control-character filter, installed on the handler
(so it covers every logger whose records reach it, `reference_gateway.trace` and the libraries' included); the
one access line per request, and the one error line for every error the gateway answers (its cause, from the
request's `errors.Diagnosis`); text (`key=value` pairs) or JSON lines (`--log-format json`) for a log shipper.

No line carries a body, a key or an exception's text that could quote either: an unexpected exception is named by
its class and where it was raised; an upstream failure by the library's words (a URL without its query).
"""

from __future__ import annotations

import json
import logging
import re
import time
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from reference_gateway.errors import Diagnosis, GatewayError

logger = logging.getLogger("reference_gateway")
LogFormat = Literal["text", "json"]

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
FORMAT = "%(asctime)s %(name)s %(levelname)s %(message)s"


class ControlEscapes(logging.Filter):
    """The one place log lines are made safe: control characters (and lone surrogates) in anything a line
    quotes, e.g. a percent-decoded path, are written as escapes, so no client can forge a log line.

    A filter on a logger sees only the records logged on that very logger, not those its children propagate;
    on a handler it sees every record the handler writes."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if _CONTROL.search(text):
            text = _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
        # The message, formatted once: the handler's formatter reads it again.
        record.msg, record.args = text, None
        return True


def make_safe(handler: logging.Handler) -> logging.Handler:
    """`handler`, with the control-character filter installed once."""
    if not any(isinstance(f, ControlEscapes) for f in handler.filters):
        handler.addFilter(ControlEscapes())
    return handler


class JSONLines(logging.Formatter):
    """`--log-format json`: one JSON object a line — time (UTC, ISO 8601), level, logger, and the record's
    fields (`event`, `request_id`, …) where it has them, else its message. ASCII only, so no value can break a
    line."""

    def format(self, record: logging.LogRecord) -> str:
        document: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, Mapping):
            document.update(fields)
        else:
            document["message"] = record.getMessage()
        return json.dumps(document, ensure_ascii=True, default=str)


def configure(level: str, log_format: LogFormat = "text") -> None:
    """The command line's logging: one stderr handler on the root logger, made safe; JSON lines for
    `log_format` json."""
    logging.basicConfig(level=level.upper(), format=FORMAT)
    if log_format == "json":
        for handler in logging.getLogger().handlers:
            handler.setFormatter(JSONLines())
    # FORMAT names neither the caller's file and line nor the thread, process or task, so a record need not
    # look them up (the logging HOWTO's "Optimization": a stack walk and three lookups per line, every request
    # at the default level).
    logging._srcfile = None  # type: ignore[attr-defined]
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
    if hasattr(logging, "logAsyncioTasks"):  # Python 3.12
        logging.logAsyncioTasks = False
    for handler in logging.getLogger().handlers:
        make_safe(handler)


def log_request(request_id: str, method: str, path: str, status: int, seconds: float) -> None:
    """The access line, one per request."""
    if logger.isEnabledFor(logging.INFO):
        fields = {"event": "request", "request_id": request_id, "method": method, "path": path,
                  "status": status, "duration_ms": round(seconds * 1000, 1)}  # fmt: skip
        logger.info(
            "%s %s %s %d %.0fms", request_id, method, path, status, seconds * 1000, extra={"fields": fields}
        )


def error_fields(
    request_id: str, method: str, path: str, status: int, seconds: float, diagnosis: Diagnosis
) -> dict[str, Any] | None:
    """The fields of a request's error line, or None when it answered no error (a 2xx or 3xx whose stream did
    not fail). The cause is the most specific known: an upstream call that failed, the provider's error status,
    an unexpected exception, then the error the gateway answered and what it was raised from."""
    error = diagnosis.error
    if status < 400 and error is None:
        return None
    fields: dict[str, Any] = {"event": "error", "request_id": request_id, "method": method, "path": path,
                              "status": status}  # fmt: skip
    if status < 400:
        fields["failed_mid_stream"] = True
    if diagnosis.answered is not None:
        answered, kind, code, param = diagnosis.answered
        fields.update(error_type=kind, code=code, param=param)
        if status < 400:
            fields["stream_error_status"] = answered
    failure = diagnosis.upstream
    if failure is not None:
        fields["cause"] = f"{failure.exception}: {failure.message}"
        fields.update(upstream_host=failure.host, upstream_path=failure.path,
                      connection="reused" if failure.reused else "new", attempt=failure.attempt,
                      time_to_failure_ms=round(failure.elapsed * 1000, 1))  # fmt: skip
    elif diagnosis.upstream_status is not None:
        fields["cause"] = f"the provider answered {diagnosis.upstream_status}"
        if diagnosis.upstream_target is not None:
            fields.update(
                upstream_host=diagnosis.upstream_target[0], upstream_path=diagnosis.upstream_target[1]
            )
    elif diagnosis.cause is not None:
        fields["cause"] = unexpected(diagnosis.cause)
    elif error is not None:
        fields["cause"] = _raised(error)
    elif status == 499:
        fields["cause"] = "the client went away"
    else:
        fields["cause"] = "refused by the gateway"
    if diagnosis.resent is not None and failure is not None and failure is not diagnosis.resent:
        first = diagnosis.resent
        fields["first_attempt"] = f"{first.exception}: {first.message}"
    fields["duration_ms"] = round(seconds * 1000, 1)
    return fields


def log_error(fields: Mapping[str, Any]) -> None:
    """The error line: ERROR for a 5xx (and a stream that failed), WARNING for a 4xx."""
    status = int(fields.get("status", 500))
    level = logging.WARNING if 400 <= status < 500 else logging.ERROR
    text = " ".join(f"{key}={_logfmt(value)}" for key, value in fields.items() if value is not None)
    logger.log(level, "%s", text, extra={"fields": {k: v for k, v in fields.items() if v is not None}})


def unexpected(exc: BaseException) -> str:
    """An unexpected exception as a log names it: its class and where it was raised (file, line, function) —
    never its text, which (and its traceback's locals) may quote the body or a key."""
    frames = traceback.extract_tb(exc.__traceback__) if exc.__traceback__ is not None else []
    where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno} in {frames[-1].name}" if frames else ""
    return f"unexpected {type(exc).__name__}{where}"


def _raised(error: GatewayError) -> str:
    """A gateway error's cause: the exception it was raised from (the gateway's own, e.g. the body parser's
    `BodyError`, whose text quotes nothing of the request), else its own message (the gateway's words). A body
    passed on from the provider is not quoted."""
    source = error.__cause__
    if isinstance(source, ValueError) and type(source).__module__.startswith("reference_gateway"):
        return f"{type(source).__name__}: {source}"
    if error.raw is not None:
        return f"{type(source).__name__}" if source is not None else "the gateway's own refusal"
    return error.message[:200]


def _logfmt(value: Any) -> str:
    text = str(value)
    if text and not any(c in text for c in ' "=\\'):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
