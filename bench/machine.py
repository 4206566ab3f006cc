"""What the numbers were measured on."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from datetime import datetime, timezone
from importlib import metadata


def _lscpu_model() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return platform.processor() or "unknown"
    for line in out.splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def _ram_gb() -> float:
    with open("/proc/meminfo") as meminfo:
        for line in meminfo:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 1024**2
    return float("nan")


def describe() -> dict[str, str]:
    return {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": _lscpu_model(),
        "cores": str(os.cpu_count()),
        "ram": f"{_ram_gb():.1f} GB",
        "os": platform.platform(),
        "python": sys.version.split()[0],
        "numpy": metadata.version("numpy"),
        "orjson": metadata.version("orjson"),
        "msgspec": metadata.version("msgspec"),
        "load average at start": " ".join(f"{v:.1f}" for v in os.getloadavg()),
    }
