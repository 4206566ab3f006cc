"""What drawing the sketched images costs: page weight and the "draw images" phase.

python -m bench.images WORK_DIR/default [--photos DIR]

The workload's images do not exist (the generator writes annotation files only), so a folder is
made with one file per image, named by the GT's `file_name`: every image is a hard link to one
small JPEG (the folder's listing costs what a real one would), and the images the page sketches
(known from a run without images) are real pictures at the image's size: the photos in
`--photos` (cycled), else noise (the worst case for JPEG).
Then the same run with `--images FOLDER`: the page's bytes before and after, and the phase's time.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image

PHASE_LINE = re.compile(r"\[prelabel\] draw images: ([0-9.]+) s")


def _run(data: Path, store: Path, *extra: str) -> tuple[dict[str, object], int, float]:
    """(findings, page bytes, draw-images seconds) of one run."""
    command = [
        "prelabel-eval",
        str(data / "gt.json"),
        str(data / "results.json"),
        "--store",
        str(store),
        "-v",
        *extra,
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    (folder,) = sorted((store / "reports").iterdir())[-1:]
    findings = json.loads((folder / "findings.json").read_bytes())
    found = PHASE_LINE.search(done.stderr)
    return findings, (folder / "report.html").stat().st_size, float(found[1]) if found else 0.0


def _picture(size: tuple[int, int], photos: list[Path], index: int) -> Image.Image:
    if not photos:
        return Image.effect_noise(size, 100).convert("RGB")
    return Image.open(photos[index % len(photos)]).convert("RGB").resize(size)


def make_folder(data: Path, folder: Path, sketched: set[str], photos: list[Path]) -> None:
    images = json.loads((data / "gt.json").read_bytes())["images"]
    placeholder = folder / ".placeholder.jpg"
    folder.mkdir(parents=True, exist_ok=True)
    out = io.BytesIO()
    Image.new("RGB", (64, 48), (120, 120, 120)).save(out, "JPEG")
    placeholder.write_bytes(out.getvalue())
    for index, image in enumerate(images):
        target = folder / image["file_name"]
        if image["file_name"] in sketched:
            picture = _picture((image["width"], image["height"]), photos, index)
            picture.save(target, "JPEG", quality=90)
        else:
            os.link(placeholder, target)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("data", type=Path, help="a workload folder with gt.json and results.json")
    parser.add_argument(
        "--photos", type=Path, help="a folder of JPEG photos drawn as the sketched images (default: noise)"
    )
    args = parser.parse_args()
    photos = sorted(args.photos.glob("*.jpg")) if args.photos else []
    with tempfile.TemporaryDirectory(prefix="bench-images-") as work:
        root = Path(work)
        findings, before, _ = _run(args.data, root / "store-without")
        sketched = {str(sketch["asset_id"]) for sketch in findings["sketches"]}  # type: ignore[attr-defined]
        make_folder(args.data, root / "images", sketched, photos)
        findings, after, seconds = _run(args.data, root / "store-with", "--images", str(root / "images"))
        print(
            json.dumps(
                {
                    "workload": str(args.data),
                    "sketched": len(sketched),
                    "pictures": findings["pictures"],
                    "page_bytes_without": before,
                    "page_bytes_with": after,
                    "draw_images_seconds": seconds,
                }
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
