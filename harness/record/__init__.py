"""`gateway-conformance record`: refresh cassettes against live providers, keeping each cassette's scenario.

run.py             the command's work: targets, attempts, writing through harness/cassette/, the report
providers.py       the provider families (official SDK, endpoint, key variable)
derive.py          the non-stream answer of a recorded stream's generation (one generation per pair)
diff.py            the semantic diff of an old and a new recording; which cassettes are faults
scenario_check.py  whether a recording still shows its scenario's properties
"""
