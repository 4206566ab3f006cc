"""hatchling's build hook for the wheel: the kernels compiled into it (`building.py`), so an
installed package needs no compiler; the wheel is then tagged for this platform. Not installed."""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class KernelsHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        spec = importlib.util.spec_from_file_location(
            "kernels_build", Path(__file__).with_name("building.py")
        )
        assert spec is not None and spec.loader is not None
        builder = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(builder)
        built = builder.build(Path(tempfile.mkdtemp(prefix="prelabel-kernels-")))
        build_data["force_include"][str(built)] = f"handler/kernels/{built.name}"
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
