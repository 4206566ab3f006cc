"""The node's outputs (contract §10), keyed exactly as node.json's `outputs`."""

from __future__ import annotations

from pathlib import Path

import msgspec
import orjson


class NodeOutputs(msgspec.Struct, frozen=True):
    report_id: str
    efficiency_level: str

    def to_dict(self) -> dict[str, str]:
        return {"REPORT_ID": self.report_id, "EFFICIENCY_LEVEL": self.efficiency_level}

    def to_json(self) -> str:
        # The spacing of Python's json.dumps, as the platform's logs and the README show the line.
        pairs = (
            f"{orjson.dumps(key).decode()}: {orjson.dumps(value).decode()}"
            for key, value in self.to_dict().items()
        )
        return "{" + ", ".join(pairs) + "}"

    def write(self, path: Path) -> None:
        path.write_text(self.to_json() + "\n", encoding="utf-8")
