"""Client compatibility: the libraries applications are built on, driven through a gateway with each
scenario's provider answer scripted, a verdict per client (`gateway-conformance clients`).

scenarios.py   specs/clients/scenarios.yaml as frozen data
observation.py what a driver saw the library return or raise
drivers/       one small driver per client library (Python in-process, Node through node/driver.mjs)
judge.py       pure: scenario x observation -> violations; a client's outcomes -> READY/LIMITED/BROKEN
runner.py      one gateway, one profile: markers, drivers, upstream calls, results document
table.py       the clients x scenarios table (terminal, summary.md)
command.py     the command's work (options.py: its options; harness/cli/clients.py parses them)
"""
