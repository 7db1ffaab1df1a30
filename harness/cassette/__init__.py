"""The cassette format: what a recorded provider answer is on disk and how it is read, matched and kept clean.

    document.py  the cassette model (provenance, interactions), load and validate, scrub, write (vcrpy's format)
    bodies.py    request bodies: JSON parsing and the stream flag of an upstream call
    matching.py  which recorded interaction answers a request (vcrpy-style matchers and the diagnosis of a miss)
    scenario.py  a cassette's scenario block: the properties it exists for and the request that provokes them
    summary.py   what a gateway can observe in a recorded answer, per provider family

Pure or plain file I/O; no server here (harness/replay/ serves cassettes, harness/record/ writes them anew).
"""
