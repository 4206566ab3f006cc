"""Finding and reading the sketched images: a given folder or s3:// prefix, or the one a format names.

Real files on the local disk and real objects on the S3 test server; each picture that cannot be
drawn (missing, two of a name, not an image, too big) is a note, and the others are still drawn.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import tomllib
from helpers.paths import ROOT
from helpers.pictures import scene, write_picture
from PIL import Image

from handler.errors import InputError
from handler.images.pictures import Pictures, draw_pictures
from handler.images.source import found_root, given_root
from handler.images.thumbnail import MAX_IMAGE_BYTES

PILLOW_MISSING = "Pillow is not installed (pip install 'evaluate-prelabeling-efficiency[images]')"

PHOTO = scene(320, 240, [("dog", 40, 40, 200, 200)])


def _folder(root: Path) -> Path:
    """good.jpg, train/deep.png, two `twin` images, a text file named like a JPEG, a file too big."""
    write_picture(root / "good.jpg", PHOTO)
    write_picture(root / "train" / "deep.png", PHOTO, "PNG")
    write_picture(root / "a" / "twin.jpg", PHOTO)
    write_picture(root / "b" / "twin.jpg", PHOTO)
    (root / "fake.jpg").write_text("not a picture", encoding="utf-8")
    with (root / "huge.jpg").open("wb") as sparse:  # holes: no disk is used, no byte is read
        sparse.truncate(MAX_IMAGE_BYTES + 1)
    return root


# By path less extension, by path, by name (listed), two of a name, a text, too big, none; the
# two ids that would leave the root find only what the listing has of their name (nothing).
WANTED = (
    "good",
    "good.jpg",
    "deep.jpg",
    "train/deep",
    "twin",
    "b/twin.jpg",
    "fake",
    "huge.jpg",
    "absent",
    "../outside.jpg",
    "/etc/outside",
)


def _notes(pictures: Pictures) -> dict[str, str | None]:
    return {asset_id: picture.note for asset_id, picture in pictures.by_asset.items()}


def _check(pictures: Pictures) -> None:
    notes = _notes(pictures)
    drawn = {asset_id for asset_id, note in notes.items() if note is None}
    assert drawn == {"good", "good.jpg", "deep.jpg", "train/deep", "b/twin.jpg"}
    assert "2 images named 'twin.jpg'" in str(notes["twin"])
    assert notes["fake"] is not None and notes["fake"].startswith("not an image")
    assert "bytes read at most" in str(notes["huge.jpg"])
    assert notes["absent"] == "not found: no image of that name in the folder"
    assert notes["../outside.jpg"] == notes["/etc/outside"] == notes["absent"]
    small = pictures.by_asset["good"].thumbnail
    assert small is not None and (small.width, small.height) == (320, 240)
    assert Image.open(io.BytesIO(small.jpeg)).size == (300, 225)
    assert pictures.by_asset["deep.jpg"].where.endswith("train/deep.png")


def test_a_local_folder_gives_each_image_by_path_or_name_and_a_note_for_the_rest(tmp_path: Path) -> None:
    write_picture(tmp_path / "outside.jpg", PHOTO)  # beside the root: never drawn
    root = given_root(str(_folder(tmp_path / "images")), "IMAGES")
    pictures = draw_pictures(root, WANTED)
    _check(pictures)
    assert pictures.note is None and pictures.found_by == "given"


def _upload(client: Any, bucket: str, folder: Path, prefix: str) -> None:
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            client.put_object(
                Bucket=bucket, Key=f"{prefix}/{path.relative_to(folder).as_posix()}", Body=path.read_bytes()
            )


def test_an_s3_prefix_is_read_through_the_same_storage_layer(
    tmp_path: Path, s3_bucket: str, s3_client: Any
) -> None:
    folder = _folder(tmp_path / "images")
    (folder / "huge.jpg").unlink()
    (folder / "huge.jpg").write_bytes(b"\xff\xd8" + b"\0" * (MAX_IMAGE_BYTES + 1))
    _upload(s3_client, s3_bucket, folder, "assets/images")
    pictures = draw_pictures(given_root(f"s3://{s3_bucket}/assets/images", "IMAGES"), WANTED)
    _check(pictures)
    assert pictures.by_asset["good"].where == f"s3://{s3_bucket}/assets/images/good.jpg"


def test_a_given_root_that_is_no_folder_is_an_error_naming_the_input(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^IMAGES: .*no such folder: expected a folder of images$"):
        given_root(str(tmp_path / "nowhere"), "IMAGES")
    write_picture(tmp_path / "one.jpg", PHOTO)
    with pytest.raises(InputError, match="no such folder"):
        given_root(str(tmp_path / "one.jpg"), "IMAGES")


@pytest.mark.parametrize(
    ("dataset", "images"),
    [
        ("ds/labels/train", "ds/images/train"),  # Ultralytics: labels/<split> beside images/<split>
        ("ds/labels", "ds/images"),
        ("ds", "ds/images"),
        ("flat", "flat"),  # images beside their label files
    ],
)
def test_a_yolo_folder_finds_its_images_beside_its_labels(tmp_path: Path, dataset: str, images: str) -> None:
    (tmp_path / dataset).mkdir(parents=True)
    (tmp_path / dataset / "a.txt").write_text("0 0.5 0.5 0.2 0.2\n", encoding="utf-8")
    write_picture(tmp_path / images / "a.jpg", PHOTO)
    root = found_root(str(tmp_path / dataset), "yolo", ["a"])
    assert root is not None and root.source.name == str(tmp_path / images)
    assert root.found_by == "beside the yolo labels"


def test_a_voc_folder_finds_jpegimages_and_formats_without_a_convention_find_nothing(tmp_path: Path) -> None:
    write_picture(tmp_path / "VOC2007" / "JPEGImages" / "a.jpg", PHOTO)
    (tmp_path / "VOC2007" / "Annotations").mkdir()
    for dataset in ("VOC2007", "VOC2007/Annotations"):
        root = found_root(str(tmp_path / dataset), "voc", ["a"])
        assert root is not None and root.source.name == str(tmp_path / "VOC2007" / "JPEGImages")
    assert found_root(str(tmp_path / "VOC2007"), "coco", ["a"]) is None
    assert found_root(str(tmp_path / "nothing-here" / "labels"), "yolo", ["a"]) is None
    # A labels folder without images beside or in it has none: the page stays as it was.
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "a.txt").write_text("0 0.5 0.5 0.2 0.2\n", encoding="utf-8")
    assert found_root(str(tmp_path / "plain"), "yolo", ["a"]) is None


def test_a_yolo_folder_on_s3_finds_its_images(tmp_path: Path, s3_bucket: str, s3_client: Any) -> None:
    write_picture(tmp_path / "ds" / "images" / "train" / "a.jpg", PHOTO)
    (tmp_path / "ds" / "labels" / "train").mkdir(parents=True)
    (tmp_path / "ds" / "labels" / "train" / "a.txt").write_text("0 0.5 0.5 0.2 0.2\n", encoding="utf-8")
    _upload(s3_client, s3_bucket, tmp_path / "ds", "ds")
    root = found_root(f"s3://{s3_bucket}/ds/labels/train", "yolo", ["a"])
    assert root is not None and root.source.name == f"s3://{s3_bucket}/ds/images/train"
    assert draw_pictures(root, ["a"]).by_asset["a"].thumbnail is not None


def test_without_pillow_the_page_is_as_before_with_one_note(tmp_path: Path) -> None:
    """Pillow is the `images` extra: a process that cannot import it runs, and its page says why
    the images it was given are not drawn, once; every sketch is drawn on its grey frame."""
    images = tmp_path / "images"
    for asset_id in ("street_0001.jpg", "street_0002.jpg"):
        write_picture(images / asset_id, PHOTO)
    store = tmp_path / "store"
    code = (
        "import sys; sys.modules['PIL'] = None\n"  # what an install without Pillow sees
        "from handler.cli import main\n"
        f"sys.exit(main(['examples/gt.json', 'examples/predictions.jsonl', '--images', {str(images)!r},"
        f" '--store', {str(store)!r}, '-q']))\n"
    )
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=environment, check=True, capture_output=True, text=True
    )
    # One `warning:` line (the command's summary; the node's stderr) naming the extra as pyproject.toml does.
    said = [line for line in (done.stdout + done.stderr).splitlines() if line.startswith("warning: ")]
    assert said == [f"warning: The images given are not drawn: {PILLOW_MISSING}."], done.stderr
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert f"{project['name']}[images]" in said[0] and "images" in project["optional-dependencies"]
    (report,) = (store / "reports").iterdir()
    page = (report / "report.html").read_text(encoding="utf-8")
    pictures = json.loads((report / "findings.json").read_text(encoding="utf-8"))["pictures"]
    assert pictures["drawn"] == 0 and pictures["note"] == PILLOW_MISSING
    assert page.count(PILLOW_MISSING.replace("'", "&#39;")) == 1 and "<image " not in page
    assert 'data-field="image_note"' not in page  # one note for all, not one per sketch
