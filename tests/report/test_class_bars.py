"""The per-class figure's bars are written in Python (handler/sections/charts.py), not by a template
loop per class and per segment: the oracle is that loop, rendered by jinja2 as the page was before."""

from __future__ import annotations

from typing import Final

import jinja2
from hypothesis import given, settings
from hypothesis import strategies as st

from handler.engine.timecost import ACTIONS
from handler.sections.charts import ACTION_COLORS, WIDTH, ClassRow, class_bars, class_chart
from handler.sections.fields import Counts
from handler.sections.wording import SHAPE_WORDS, duration, score_text

# The template the Python replaced (its lines cut here).
ROWS: Final = "".join(
    (
        "{% for row in chart.rows %}<g data-class-row>\n",
        '    <text x="{{ chart.left - 8 }}" y="{{ row.y + 15 }}" text-anchor="end" class="axis" ',
        'data-field="class_label">{{ row.label }}</text><title>{{ row.name }}: {{ row.seconds | duration }}',
        " left, score {{ score2(row.score) }}{% if row.decision %}, {{ row.decision }}{% endif %}</title>\n",
        '    {% for s in row.segments %}<rect x="{{ s.x }}" y="{{ row.y + 4 }}" width="{{ s.width }}" ',
        'height="14" fill="{{ colors[s.key] }}"><title>{{ row.name }} · {{ w.action(s.key) }}: ',
        "{{ w.count(s.boxes) }}, {{ s.seconds | duration }}</title></rect>{% endfor %}\n",
        "    <text x=\"{{ chart.left + (row.segments | sum(attribute='width')) + 6 }}\" ",
        'y="{{ row.y + 15 }}" class="value">{{ row.seconds | duration }}</text>\n',
        '    <text x="{{ width - 4 }}" y="{{ row.y + 15 }}" text-anchor="end" class="decision ',
        "{{ 'draw' if row.decision == 'draw' else 'prelabel' }}\" data-field=\"decision\">",
        "{{ row.decision }}</text>\n  </g>{% endfor %}",
    )
)


def _oracle() -> jinja2.Template:
    environment = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    environment.filters["duration"] = duration
    environment.globals.update(score2=score_text, colors=ACTION_COLORS, width=WIDTH)
    return environment.from_string(ROWS)


ORACLE: Final = _oracle()
count = st.integers(0, 10**6)
counts = st.builds(
    lambda c, s, r, p, n: Counts(
        correct=c, shifted=s, class_confused=r, false_positive=p, false_negative=n, total=c + s + r + p + n
    ),
    count,
    count,
    count,
    count,
    count,
)
names = st.one_of(
    st.sampled_from(["car", "<b>&'\"x", "a very long class name indeed, cut"]), st.text(max_size=30)
)
decisions = st.sampled_from(["", "draw", "pre-label ≥ 0.45", "pre-label ≥ 0"])
rows = st.tuples(names, counts, st.floats(-1, 1), decisions)
costs = st.fixed_dictionaries(dict.fromkeys(ACTIONS, st.floats(0, 100)))


@settings(max_examples=150, deadline=None)
@given(st.lists(rows, max_size=6), costs, st.floats(0, 1e9), st.sampled_from(sorted(SHAPE_WORDS)))
def test_class_bars_are_written_as_their_template_wrote_them(
    listed: list[ClassRow], prices: dict[str, float], most: float, shape: str
) -> None:
    chart = class_chart(listed, prices, most)
    words = SHAPE_WORDS[shape]
    assert str(class_bars(chart, words)) == ORACLE.render(chart=chart, w=words)


def test_a_class_name_is_escaped_in_its_bar() -> None:
    counts = Counts(correct=1, shifted=0, class_confused=0, false_positive=0, false_negative=0, total=1)
    chart = class_chart([('<script>"a" & b</script>', counts, 0.5, "draw")], dict.fromkeys(ACTIONS, 1.0), 1.0)
    written = str(class_bars(chart, SHAPE_WORDS["boxes"]))
    assert "<script>" not in written
    assert "&lt;script&gt;&#34;a&#34; &amp; b&lt;/script&gt;" in written
