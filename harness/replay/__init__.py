"""The replay upstream: a loopback provider that answers a gateway's upstream calls from cassettes.

It routes each call by the case marker found in the request body, records every call per marker,
injects faults (status errors, mid-stream errors, drops, delays, re-chunking) and serves image fixtures.

    plan.py      pure: what to send for a cassette interaction or a fault (pacing, re-chunking, drops)
    state.py     registered cases, the calls each received, diagnostics (one lock)
    sending.py   sending a plan (the only I/O of the serving path)
    app.py       the ASGI app: provider endpoints, the control API, the file server's route
    files.py     the loopback file server under /__gc/files/ (fixtures.py: the images, built in code)
    server.py    ReplayServer (a background thread) and the foreground `serve-upstream`
    client.py    ReplayClient: the harness's side of the control API
    inprocess.py the control API without a socket, for the harness that serves the replay itself
    validate.py  what each provider refuses (unknown fields, wrong types): answered as that provider's 400

The cassette format is harness/cassette/, the `record` command harness/record/, the simulator harness/simulator/:
nothing here uses them but the cassette format.

Loopback file server under `/__gc/files/` (the harness's `${images_url}`), built in code, no files:
  tiny.png, tiny.jpg, tiny.gif, tiny.webp   valid 1x1 images with their real content-type
  png-as-text.txt                           PNG bytes served as text/plain
  not-an-image.png                          text bytes served as image/png
  missing.png                               404
  redirect/<n>/<name>                       n chained 302 redirects, then <name>
  redirect-to?url=<url>                     one 302 to any URL (redirect-to-private-address rules)
  big.png                                   a valid PNG header padded to 10 MiB + 1 byte
  slow.png?delay=S                          tiny.png, first byte after S seconds (default 20)

Nothing is re-exported here: importing `harness.replay.client` (all a catalog run with `--replay-url` needs)
must not load the server, Starlette and vcrpy.
"""
