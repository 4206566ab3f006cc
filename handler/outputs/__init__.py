"""The node's outputs (SPEC §10), keyed exactly as node.json's `outputs`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class NodeOutputs:
    report_id: str
    efficiency_level: str

    def to_dict(self) -> dict[str, str]:
        return {"REPORT_ID": self.report_id, "EFFICIENCY_LEVEL": self.efficiency_level}

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    def write(self, path: Path) -> None:
        path.write_text(self.to_json() + "\n", encoding="utf-8")
