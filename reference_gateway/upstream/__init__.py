"""The side that talks to providers, and nothing else does.

client.py  the one pooled client for every channel and family; the boundary where transport failures
           become the gateway's errors
netio.py   its network I/O: httpx's transport interface on aiohttp
images.py  downloads of http(s) image URLs for inline-only models, with the limits and an SSRF guard
"""
