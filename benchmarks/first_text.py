"""Where the page protocol's first text goes: Gradio's endpoint against the JSON API, same decoding.

The benchmark (``benchmarks.bench``) gives the JSON API greedy decoding and the Gradio endpoint the
model card's (it takes no options), so their first-text times differ by protocol and by decoding at
once. This separates the two, one client, requests in turns on a running app:

- ``gradio``: ``POST /gradio_api/call/translate`` (keeping one Gradio session, as the page does),
  then its event stream, until the first non-empty text;
- ``api card``: ``POST /v1/translate`` with ``"stream": true`` and the page's defaults (the model
  card's decoding), until the first text;
- ``api greedy``: the same, greedy without repetition penalty (what the benchmark sends).

Every request has its own text (the benchmark's numbered sentences) and ``"cache": false``; start
the app with ``--cache-size 0`` so that the Gradio endpoint, which cannot say so, misses too.

    python app.py --model /tmp/bench-cpu --cache-size 0 --port 7860 &
    python -m benchmarks.first_text http://127.0.0.1:7860 --requests 24
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import httpx

from benchmarks.clients import prompt

GREEDY = {"deterministic": True, "repetition_penalty": 1.0}


def _first_data(response: httpx.Response, started: float) -> float | None:
    """Seconds from ``started`` to the first ``data:`` line with text; reads the stream to its end."""
    first = None
    for line in response.iter_lines():
        data = line[5:].strip() if line.startswith("data:") else ""
        if first is None and data not in ("", "null", "[null]", '[""]'):
            first = time.perf_counter() - started
    return first


def gradio(http: httpx.Client, session: str) -> Callable[[int], float | None]:
    def call(i: int) -> float | None:
        p = prompt(i)
        started = time.perf_counter()
        queued = http.post("/gradio_api/call/translate",
                           json={"data": [p.text, p.source, p.target], "session_hash": session})
        event = queued.raise_for_status().json()["event_id"]
        with http.stream("GET", f"/gradio_api/call/translate/{event}") as response:
            return _first_data(response, started)
    return call


def api(http: httpx.Client, options: dict[str, Any] | None) -> Callable[[int], float | None]:
    def call(i: int) -> float | None:
        p = prompt(i)
        body: dict[str, Any] = {"text": p.text, "source_lang": p.source, "target_lang": p.target,
                                "stream": True, "cache": False}
        if options:
            body["options"] = options
        started = time.perf_counter()
        with http.stream("POST", "/v1/translate", json=body) as response:
            return _first_data(response.raise_for_status(), started)
    return call


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url", help="the running app, e.g. http://127.0.0.1:7860")
    parser.add_argument("--requests", type=int, default=24, help="per column")
    args = parser.parse_args(argv)
    with httpx.Client(base_url=args.url, trust_env=False, timeout=120) as http:
        columns = {"gradio": gradio(http, uuid.uuid4().hex[:11]), "api card": api(http, None),
                   "api greedy": api(http, GREEDY)}
        for call in columns.values():  # warm-up
            call(10_000)
        times: dict[str, list[float]] = {name: [] for name in columns}
        for i in range(args.requests):
            for name, call in columns.items():
                took = call(i * len(columns) + list(columns).index(name))
                if took is not None:
                    times[name].append(took * 1000)
    print("| column | requests | first text p50 ms | / api card |")
    print("|---|---:|---:|---:|")
    card = statistics.median(times["api card"])
    for name, values in times.items():
        p50 = statistics.median(values)
        print(f"| {name} | {len(values)} | {p50:.1f} | {p50 / card:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
