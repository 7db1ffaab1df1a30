"""`gateway-conformance fuzz`: hostile requests, generated from a seed and shrunk by hypothesis, against a gateway.

Checks what any gateway owes its clients (`invariants.py`): no 5xx for a client's mistake, every error in the
profile's shape, no hang, still healthy afterwards and — with the replay upstream in front of which the gateway
runs — no invalid JSON upstream and no upstream request at all for a body the doc refuses. A failure prints
hypothesis's shrunk minimal body and a one-line curl repro. Results are written in certify's report format with
the area `robustness`. Exit codes: 0 nothing found, 1 an invariant broken, 2 the harness failed, 3 bad
configuration.

    command.py     the command's work (its arguments: harness/cli/fuzz.py)
    run.py         one profile fuzzed: cases sent, judged, the first failure shrunk, health checked
    tap.py         the replay upstream behind a tap that keeps every upstream request body
    strategies.py  the seeded cases (valid bodies from the wire schema, then broken on purpose)
    invariants.py  what every answer owes a client; wire.py the same judged upstream
    shrink.py      hypothesis's shrinker on a failing case; document.py the results document
"""
