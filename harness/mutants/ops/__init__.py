"""The mutation vocabulary: pure edits of JSON documents, SSE events and streams, statuses and headers.

    paths.py   paths into a JSON document, and the conditions tested on one
    edits.py   edits of one JSON document (EDIT_OPS)
    events.py  SSE events: split, parsed, named by kind, selected, edited
    stream.py  stream operations, one event at a time (STREAM_OPS), and the rewriter that runs them
    http.py    statuses and headers

Every function here takes its inputs and returns new values; nothing reads the network or the environment (one
stream op reads the clock, TIMED_STREAM_OPS). The proxy (`harness.mutants.proxy`) is the only caller that does I/O.
"""
