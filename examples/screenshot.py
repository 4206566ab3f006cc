"""The README's report screenshot, from the current page: `python examples/screenshot.py`.

Runs the node's code path on COCO val2014 (100 images, the shared third-party files), renders the
report, and photographs it with Debian's headless Chromium (`/usr/bin/chromium`, driven by the
`playwright` package of the test extras; no browser is downloaded) at 900x700, the preview
widget's size, into `examples/report-screenshot.png`.

`python examples/screenshot.py --page report.html --out shots/` photographs any page instead, at
900x700 and 1400x900, each as the viewport and as the full page (how a reviewer looks at a change);
`--page report.html --sketches sketches.png` photographs its sketches only (docs/images.md's picture).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import tempfile
from pathlib import Path
from typing import Final

HERE: Final = Path(__file__).resolve().parent
CHROMIUM: Final = Path("/usr/bin/chromium")
SCREENSHOT: Final = HERE / "report-screenshot.png"
# The digest of the page's templates the screenshot was made from: a test compares it with the
# templates' own, so a page change without a new screenshot fails.
STAMP: Final = HERE / "report-screenshot.templates.sha256"
# The page's templates: its frame and macros, and each feature's fragment.
TEMPLATE_FOLDERS: Final = (HERE.parent / "report_templates", HERE.parent / "handler" / "features")
README_VIEWPORT: Final = (900, 700)
VIEWPORTS: Final = ((900, 700), (1400, 900))


def third_party() -> Path:
    """The third-party annotation files the tests use (tests/data/third_party, credited in docs)."""
    return HERE.parent / "tests" / "data" / "third_party"


def templates_digest() -> str:
    """The SHA-256 of every template file of the page, names and contents, in name order."""
    digest = hashlib.sha256()
    root = HERE.parent
    for path in sorted(path for folder in TEMPLATE_FOLDERS for path in folder.rglob("*.j2")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def coco_report(work: Path) -> Path:
    """The report of coco_val2014_100 (threshold 0.5), stored in a store under `work`."""
    from handler.inputs import parse_inputs
    from handler.pipeline import run
    from handler.storage.local import LocalStore

    # named from the project folder, as a user in a clone would: the page shows no machine's path
    folder = third_party().relative_to(HERE.parent) / "coco_val2014_100"
    raw = {
        "GT_DATASET": str(folder / "instances_val2014_100.json"),
        "PRED_DATASET": str(folder / "instances_val2014_fakebbox100_results.json"),
    }
    started_in = Path.cwd()
    os.chdir(HERE.parent)
    try:
        result = run(parse_inputs(raw), LocalStore(work))
    finally:
        os.chdir(started_in)
    return work / "reports" / result.outputs.report_id / "report.html"


def photograph(page_file: Path, shots: list[tuple[Path, tuple[int, int], bool]]) -> None:
    """Each shot: (PNG path, viewport, full page?)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"]
        )
        try:
            for path, (width, height), full in shots:
                context = browser.new_context(viewport={"width": width, "height": height})
                page = context.new_page()
                page.goto(page_file.resolve().as_uri(), wait_until="load")
                page.screenshot(path=str(path), full_page=full)
                context.close()
        finally:
            browser.close()


def photograph_part(page_file: Path, selector: str, path: Path) -> None:
    """The part of the page `selector` picks, at 1400x900 (the docs' picture of a figure)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"]
        )
        try:
            page = browser.new_page(viewport={"width": VIEWPORTS[1][0], "height": VIEWPORTS[1][1]})
            page.goto(page_file.resolve().as_uri(), wait_until="load")
            page.locator(selector).screenshot(path=str(path))
        finally:
            browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--page", type=Path, help="photograph this page instead of the README's report")
    parser.add_argument("--out", type=Path, default=Path("."), help="folder for --page's screenshots")
    parser.add_argument("--sketches", type=Path, help="photograph --page's sketches (1400x900) into this PNG")
    args = parser.parse_args()
    if args.page is not None and args.sketches is not None:
        photograph_part(args.page, "[data-section-figure=sketches]", args.sketches)
        print(args.sketches)
        return
    if args.page is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        stem = args.page.stem
        shots = [
            (args.out / f"{stem}-{w}x{h}{'-full' if full else ''}.png", (w, h), full)
            for w, h in VIEWPORTS
            for full in (False, True)
        ]
        photograph(args.page, shots)
        print("\n".join(str(path) for path, _, _ in shots))
        return
    with tempfile.TemporaryDirectory(prefix="prelabel-screenshot-") as work:
        photograph(coco_report(Path(work)), [(SCREENSHOT, README_VIEWPORT, False)])
    STAMP.write_text(templates_digest() + "\n")
    print(SCREENSHOT)


if __name__ == "__main__":
    main()
