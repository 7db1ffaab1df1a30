"""What the gateway logs and how a log line is made safe: the control-character filter, installed on the handler
(so it covers every logger whose records reach it, `reference_gateway.trace` and the libraries' included), and
the one line for an unexpected exception.
"""

from __future__ import annotations

import logging
import re

logger = logging.getLogger("reference_gateway")

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


def configure(level: str) -> None:
    """The command line's logging: one stderr handler on the root logger, made safe."""
    logging.basicConfig(level=level.upper(), format=FORMAT)
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


def log_unexpected(request_id: str, exc: BaseException) -> None:
    # The type and the request id only: an exception's text (and its traceback's locals) may quote the body
    # or a key.
    logger.error("%s unexpected %s", request_id, type(exc).__name__)
