"""`gateway-conformance certify`: the composition at the top of the harness: child catalog runs (harness/orchestrate/),
the fuzz budget (harness/fuzz/), the client libraries (harness/clients/), the reports (harness/report/) and the
conformance report (harness/conformance/), one verdict and one exit code.

    run.py      the certify run: embedded or against a URL, every profile, the report folder and the verdict
    clients.py  `certify --clients`: the client libraries against the gateway certify judged
"""
