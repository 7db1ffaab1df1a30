"""The rule engine: one rule variant against one gateway, with no pytest in sight.

    target.py     who is judged (Target), what a run found (Outcome), whether a rule can be judged at all
    render.py     the rule's request (and upstream plan) with the run's placeholders, marker and padding filled in
    send.py       sending it and waiting for the whole answer; the exchange (and its `then` steps) collected
    steps.py      what a `then` step sends, its `${first.*}` references and `${data_url:...}` payloads
    listener.py   the harness's own loopback listener (`${listener_url}`)
    judge.py      violations to an outcome, harness faults, replay diagnostics, `then` steps judged
    live.py       live mode's forms of a rule (pure: the scripted answers are passed in)
    scripted.py   the scripted answers of a rule's cassette, read from disk (live forms' input)
    cost.py       live mode's cost guard (planned requests and tokens, --max-requests)
    run.py        the single run, the live repeat loop beside it, and `run_rule` that picks between them

Kept light on purpose: import the module you need.
"""
