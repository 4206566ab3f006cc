"""Damaged archives and undecodable XML: a CVAT export zip with a bad CRC, a broken header, an unknown
compression method, the encrypted flag or a member cut short, and a CVAT or VOC file whose XML
declaration names an encoding Python does not know (or one its bytes are not in), each end in a
report or in one `error:` line naming the file; never a traceback."""

from __future__ import annotations

import io
import struct
import zipfile
from pathlib import Path
from typing import Final

import pytest
from helpers.examples import examples
from helpers.paths import EXAMPLES, THIRD_PARTY
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from handler.cli import main as cli_main

CVAT_GT: Final = (EXAMPLES / "cvat" / "gt.xml").read_bytes()
CVAT_PRED: Final = EXAMPLES / "cvat" / "predictions.xml"
VOC_GT: Final = THIRD_PARTY / "voc_padilla_100" / "gts" / "pascalvoc_format"
DECLARATION: Final = b'<?xml version="1.0" encoding="utf-8"?>'


def _zip(xml: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("export/annotations.xml", xml)
    return buffer.getvalue()


def _field(content: bytes, offset_in_header: int, value: int) -> bytes:
    """`value` in a 2-byte field of the local header and of the central directory entry."""
    changed = bytearray(content)
    central = changed.find(b"PK\x01\x02")
    changed[offset_in_header : offset_in_header + 2] = struct.pack("<H", value)
    shift = {8: 10, 6: 8}[offset_in_header]  # the same field sits 2 bytes later in the central entry
    changed[central + shift : central + shift + 2] = struct.pack("<H", value)
    return bytes(changed)


def _flipped(content: bytes, at: float) -> bytes:
    changed = bytearray(content)
    position = int((len(changed) - 1) * at)
    changed[position] ^= 0xFF
    return bytes(changed)


ARCHIVE_DAMAGE: Final = {
    "flipped byte": _flipped,
    "cut short": lambda content, at: content[: int(len(content) * at)],
    "unknown compression": lambda content, at: _field(content, 8, 99),
    "encrypted flag": lambda content, at: _field(content, 6, 1),
    "broken magic": lambda content, at: b"PK\x03\x05" + content[4:],
}


def _one_line_or_report(argv: list[str], capsys: pytest.CaptureFixture[str], named: str) -> None:
    capsys.readouterr()
    code = cli_main(argv)
    error = capsys.readouterr().err
    assert code in (0, 2), error
    if code == 2:
        lines = error.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and named in lines[0], error


@settings(
    max_examples=examples(30),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(damage=st.sampled_from(sorted(ARCHIVE_DAMAGE)), at=st.floats(0, 1))
def test_a_damaged_cvat_zip_is_one_line_naming_it(
    tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str], damage: str, at: float
) -> None:
    folder = tmp_path_factory.mktemp("zip")
    archive = folder / "task_export.zip"
    archive.write_bytes(ARCHIVE_DAMAGE[damage](_zip(CVAT_GT), at))
    _one_line_or_report(
        [str(archive), str(CVAT_PRED), "--store", str(folder / "s")], capsys, "task_export.zip"
    )


@pytest.mark.parametrize("damage", ["unknown compression", "encrypted flag", "broken magic"])
def test_each_kind_of_damage_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    archive = tmp_path / "task_export.zip"
    archive.write_bytes(ARCHIVE_DAMAGE[damage](_zip(CVAT_GT), 0.5))
    assert cli_main([str(archive), str(CVAT_PRED), "--store", str(tmp_path / "s")]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    side = "ground truth (GT_DATASET)"
    assert line.startswith(f"error: {side}: {archive}: export/annotations.xml cannot be read from the zip (")


ENCODINGS: Final = ["x-unknown-9", "utf-16", "utf-32", "ebcdic-cp-be", "", "\u00e9", "latin-1", "ascii"]


@settings(
    max_examples=examples(24),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(encoding=st.sampled_from(ENCODINGS), reader=st.sampled_from(["cvat", "voc"]))
def test_an_xml_declaration_naming_another_encoding_is_one_line(
    tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str], encoding: str, reader: str
) -> None:
    folder = tmp_path_factory.mktemp("xml")
    declared = f'<?xml version="1.0" encoding="{encoding}"?>'.encode()
    if reader == "cvat":
        gt = folder / "annotations.xml"
        gt.write_bytes(CVAT_GT.replace(DECLARATION, declared, 1))
        argv = [str(gt), str(CVAT_PRED)]
    else:
        gt = folder / "gts"
        gt.mkdir()
        for source in sorted(VOC_GT.glob("*.xml"))[:3]:
            text = source.read_bytes()
            body = text[text.index(b"?>") + 2 :] if text.startswith(b"<?xml") else text
            (gt / source.name).write_bytes(declared + body)
        argv = [str(gt), str(THIRD_PARTY / "voc_padilla_100" / "dets" / "abs_xyx2y2")]
    _one_line_or_report([*argv, "--store", str(folder / "s")], capsys, str(gt))


def test_an_unknown_encoding_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gt = tmp_path / "annotations.xml"
    gt.write_bytes(CVAT_GT.replace(DECLARATION, b'<?xml version="1.0" encoding="x-unknown-9"?>', 1))
    assert cli_main([str(gt), str(CVAT_PRED), "--store", str(tmp_path / "s")]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line == (
        f"error: ground truth (GT_DATASET): {gt}: expected XML in an encoding its declaration names and "
        "Python knows (unknown encoding: x-unknown-9)"
    )
