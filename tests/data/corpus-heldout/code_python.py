"""Rate-limited fetcher for a paginated REST API, with retries and a small on-disk cache."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import requests

CACHE_DIR = Path.home() / ".cache" / "fetcher"
MAX_RETRIES = 5


@dataclass
class RateLimiter:
    per_second: float
    _last: float = field(default=0.0, init=False)

    def wait(self) -> None:
        interval = 1.0 / self.per_second
        now = time.monotonic()
        delay = self._last + interval - now
        if delay > 0:
            time.sleep(delay)
        self._last = time.monotonic()


class Fetcher:
    def __init__(self, base_url: str, token: str, per_second: float = 4.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.session = requests.Session()
        self.session.headers.update({"Authorization": f"Bearer {token}"})
        self.limiter = RateLimiter(per_second)
        CACHE_DIR.mkdir(parents=True, exist_ok=True)

    def _cache_path(self, url: str, params: dict) -> Path:
        key = hashlib.sha256(f"{url}?{sorted(params.items())}".encode()).hexdigest()[:24]
        return CACHE_DIR / f"{key}.json"

    def get(self, path: str, **params) -> dict:
        url = f"{self.base_url}/{path.lstrip('/')}"
        cached = self._cache_path(url, params)
        if cached.exists() and time.time() - cached.stat().st_mtime < 3600:
            return json.loads(cached.read_text(encoding="utf-8"))

        for attempt in range(MAX_RETRIES):
            self.limiter.wait()
            response = self.session.get(url, params=params, timeout=30)
            if response.status_code == 429:
                retry_after = float(response.headers.get("Retry-After", 2 ** attempt))
                time.sleep(min(retry_after, 60))
                continue
            if 500 <= response.status_code < 600:
                time.sleep(2 ** attempt)
                continue
            response.raise_for_status()
            data = response.json()
            cached.write_text(json.dumps(data), encoding="utf-8")
            return data
        raise RuntimeError(f"gave up on {url} after {MAX_RETRIES} attempts")

    def paginate(self, path: str, page_size: int = 100) -> Iterator[dict]:
        page = 1
        while True:
            body = self.get(path, page=page, per_page=page_size)
            items = body.get("items", [])
            yield from items
            if len(items) < page_size or not body.get("has_more"):
                return
            page += 1


if __name__ == "__main__":
    import os
    import sys

    fetcher = Fetcher("https://api.example.org/v2", os.environ.get("API_TOKEN", ""))
    total = 0
    for item in fetcher.paginate(sys.argv[1] if len(sys.argv) > 1 else "projects"):
        total += 1
        print(f"{item['id']:>8}  {item.get('name', '?'):<40} {item.get('updated_at', '')}")
    print(f"{total} items", file=sys.stderr)
