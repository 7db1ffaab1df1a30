"""Start TensorZero's HTTP gateway (OpenAI-compatible routes only) from the tensorzero wheel and keep it running.
    python launch_gateway.py CONFIG URL_FILE
The wheel's embedded launcher (tensorzero._start_http_gateway, what patch_openai_client uses; Rust
start_openai_compatible_gateway) binds 127.0.0.1 on a port the OS picks, without ClickHouse, Postgres or Valkey.
Its base URL (http://127.0.0.1:PORT/openai/v1) is printed and written to URL_FILE; SIGTERM/SIGINT stop it."""
import signal
import sys
import threading

import tensorzero


def main(config: str, url_file: str) -> int:
    gateway = tensorzero._start_http_gateway(
        config_file=config, clickhouse_url=None, postgres_url=None, valkey_url=None, async_setup=False
    )
    with open(url_file, "w") as f:
        f.write(gateway.base_url + "\n")
    print(f"tensorzero {tensorzero.__version__} gateway at {gateway.base_url}", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    while not stop.wait(1):
        pass
    gateway.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
