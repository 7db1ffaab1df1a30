"""Orchestration: what certify, matrix and mutants run around the rules. Nothing here parses a command line
(harness/cli/ does) and nothing imports pytest (child pytest runs are processes).

    options.py    the plugin's options, declared once (the plugin adds them all, certify those it forwards)
    config.py     a run's configuration: validated once, rendered as child pytest arguments and rerun lines
    preflight.py  one request before any rule: is the gateway there, at its base path, taking the key?
    embedded.py   the embedded reference gateway: started as a process, and what the rules are told about it
    child.py      one profile's catalog in a child pytest run; the replay upstream it needs; rerun lines
    certify.py    `certify`: the configuration checked, each profile's catalog run, the reports, the verdict
    matrix.py     `matrix`: every catalog against every gateway
"""
