"""A sketch's boxes are written in Python (handler/sections/charts.py), not by a template macro per
box: the oracle is that macro, rendered by jinja2 with autoescaping as the page was before."""

from __future__ import annotations

from typing import Final

import jinja2
from hypothesis import given, settings
from hypothesis import strategies as st

from handler.features.sketches.section import SketchBox
from handler.sections.charts import OUTCOME_ACTIONS, outline_path, sketch_marks, sketch_shapes
from handler.sections.wording import SHAPE_WORDS, ShapeWords

# The template the Python replaced (its lines cut here): one macro call per box.
MACROS: Final = "".join(
    (
        "{%- macro box_place(box, angle) -%}",
        """x="{{ '%.4g' % box[0] }}" y="{{ '%.4g' % box[1] }}" """,
        """width="{{ '%.4g' % (box[2] - box[0]) }}" height="{{ '%.4g' % (box[3] - box[1]) }}\"""",
        """{% if angle %} transform="rotate({{ '%.4g' % angle }} """,
        """{{ '%.5g' % ((box[0] + box[2]) / 2) }} {{ '%.5g' % ((box[1] + box[3]) / 2) }})"{% endif %}""",
        "{%- endmacro -%}",
        "{% for b in boxes %}{% set shape = 'path' if b.outline else 'rect' %}<{{ shape }} ",
        """{% if b.outline %}d="{{ b.outline | outline_path }}"{% else %}{{ box_place(b.box, b.angle) }}""",
        """{% endif %} class="{{ b.side }} {{ b.outcome }}{% if b.uncertain %} uncertain{% endif %}">""",
        "<title>{{ b.side | replace('gt', 'ground truth') | replace('pred', 'prediction') }} ",
        "{{ b.class_name }}{% if b.confidence is not none %} {{ '%.2f' % b.confidence }}{% endif %}: ",
        "{{ words.action(outcome_actions[b.outcome]) }}{% if b.outcome == 'false_negative' %} (missed)",
        "{% endif %}{% if b.uncertain %} (uncertain confidence){% endif %}</title></{{ shape }}>",
        "{% endfor %}|",
        """{% for box, angle in marks %}<rect {{ box_place(box, angle) }} class="mark"/>{% endfor %}""",
    )
)


def _outline_path(outline: tuple[tuple[float, ...], ...]) -> str:
    return "".join(f"M{' '.join(map(str, ring[:2]))}L{' '.join(map(str, ring[2:]))}Z" for ring in outline)


def _oracle() -> jinja2.Template:
    environment = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    environment.filters["outline_path"] = _outline_path
    return environment.from_string(MACROS)


ORACLE: Final = _oracle()
coordinate = st.floats(-1e6, 1e6, allow_nan=False, width=64)
boxes = st.tuples(coordinate, coordinate, coordinate, coordinate)
angles = st.one_of(st.just(0.0), st.floats(-360, 360, allow_nan=False))
# An outline's points are rounded to a thousandth of the frame's width (engine/drawn_boxes.py).
rounded = st.builds(round, coordinate, st.integers(0, 3))
rings = st.lists(st.tuples(rounded, rounded), min_size=0, max_size=8).map(
    lambda points: tuple(value for point in points for value in point)
)
sketch_boxes = st.builds(
    SketchBox,
    side=st.sampled_from(["gt", "pred"]),
    box=boxes,
    angle=angles,
    class_name=st.one_of(st.sampled_from(["car", "<b>&'\"x", "a\u00e9\u2026"]), st.text(max_size=12)),
    outcome=st.sampled_from(sorted(OUTCOME_ACTIONS)),
    confidence=st.one_of(st.none(), st.floats(0, 1)),
    uncertain=st.booleans(),
    outline=st.one_of(st.just(()), st.lists(rings, min_size=1, max_size=3).map(tuple)),
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(sketch_boxes, max_size=6),
    st.lists(st.tuples(boxes, angles), max_size=2),
    st.sampled_from(sorted(SHAPE_WORDS)),
)
def test_a_sketch_is_written_as_its_macro_wrote_it(
    shapes: list[SketchBox], marks: list[tuple[tuple[float, ...], float]], shape: str
) -> None:
    words: ShapeWords = SHAPE_WORDS[shape]
    expected = ORACLE.render(boxes=shapes, marks=marks, words=words, outcome_actions=OUTCOME_ACTIONS)
    assert f"{sketch_shapes(shapes, words)}|{sketch_marks(marks)}" == expected


@given(
    st.lists(st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=9).map(tuple), max_size=3)
)
def test_an_outline_path_reads_back_as_its_numbers(outline: list[tuple[float, ...]]) -> None:
    """Whatever the numbers (an exponent is spelled as orjson spells it), each loop is `M` its
    first point, `L` the others, `Z`, and every number reads back as the float it was."""
    path = outline_path(tuple(outline))
    loops = path.split("Z")[:-1] if path else []
    assert len(loops) == len(outline)
    for loop, ring in zip(loops, outline, strict=True):
        first, _, others = loop.removeprefix("M").partition("L")
        assert [float(number) for number in f"{first} {others}".split()] == list(ring)


def test_a_class_name_is_escaped_in_its_title() -> None:
    box = SketchBox(
        side="pred",
        box=(1, 2, 3, 4),
        angle=0,
        class_name='<script>"a" & b</script>',
        outcome="false_positive",
        confidence=0.5,
        uncertain=False,
    )
    written = str(sketch_shapes([box], SHAPE_WORDS["boxes"]))
    assert "<script>" not in written
    assert "&lt;script&gt;&#34;a&#34; &amp; b&lt;/script&gt;" in written
