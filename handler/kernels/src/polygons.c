/* COCO polygons rasterised as pycocotools' rleFrPoly draws each part, the parts of an object
 * united as its rleMerge unites them; one object after another, its runs written directly.
 *
 * rleFrPoly scales the points by 5, rounds them with C's (int)(x + .5), walks each edge one unit
 * at a time along its longer axis and keeps the steps that cross a column of pixel centres within
 * the image: each toggles the mask at a pixel position (column * height + row). The mask is then
 * the positions that an odd number of toggles are at or before; rleMerge's union of the parts is
 * the positions in any part's mask. Both write those sets as runs, background first, a run never
 * empty but the first: so do these kernels, from the toggles sorted, without walking every step
 * (only the steps that cross a column are computed, with the same float operations), in 16 bits
 * (a run longer than RUN_PIECE as pieces, `run_to`).
 *
 * Built with -std=c11, which keeps GCC from contracting a * b + c into one rounding (fma): the
 * walk's coordinates must round as rleFrPoly's do. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#define SCALE 5.0
/* COCO's counts are 32-bit: an image of more pixels cannot be written as runs. */
#define MAX_PIXELS ((int64_t)UINT32_MAX)
/* The longest run a 16-bit count holds. */
#define RUN_PIECE 65535

/* C's (int) of a double as pycocotools built for x86-64 computes it: toward zero, and INT_MIN
 * (the processor's "integer indefinite") for NaN (the slope of an edge of length 0) or a value
 * out of int's range (a point far off the image). */
static int64_t c_int(double value) {
    if (!(value > -2147483649.0 && value < 2147483648.0)) return INT32_MIN;
    return (int64_t)value;
}

/* An edge as rleFrPoly walks it: from (u, v) = `start` along its longer axis (u: x when
 * `along_x`, else y), `length` unit steps of u, v moved by `slope` a step; `flip` when it is
 * walked from its far end (t = length first), as rleFrPoly does to walk with x or y rising. */
typedef struct {
    int64_t start_u, start_v, length;
    double slope;
    int along_x, flip;
} Edge;

static Edge edge_of(int64_t x0, int64_t y0, int64_t x1, int64_t y1) {
    int64_t dx = x1 > x0 ? x1 - x0 : x0 - x1, dy = y1 > y0 ? y1 - y0 : y0 - y1;
    Edge e;
    e.along_x = dx >= dy;
    e.flip = e.along_x ? x0 > x1 : y0 > y1;
    if (e.flip) {
        int64_t t = x0; x0 = x1; x1 = t;
        t = y0; y0 = y1; y1 = t;
    }
    e.start_u = e.along_x ? x0 : y0;
    e.start_v = e.along_x ? y0 : x0;
    e.length = e.along_x ? dx : dy;
    e.slope = e.along_x ? (double)(y1 - y0) / (double)dx : (double)(x1 - x0) / (double)dy;
    return e;
}

/* The coordinate across the edge at step t (rleFrPoly's `(int)(ys + s * t + .5)`). */
static int64_t across(const Edge *e, int64_t t) {
    return c_int((double)e->start_v + e->slope * (double)t + .5);
}

/* The point at step t, as (x, y). */
static void point_at(const Edge *e, int64_t t, int64_t *x, int64_t *y) {
    int64_t along = e->start_u + t, other = across(e, t);
    *x = e->along_x ? along : other;
    *y = e->along_x ? other : along;
}

typedef struct {
    uint32_t column, row, part;
} Toggle;

/* Where toggles go (`at` NULL: only counted; `short_of_room` once one found no room): those of
 * the columns `low_column` to `high_column` of the image, and the columns they fall in. */
typedef struct {
    Toggle *at;
    int64_t count, room, low_column, high_column, first_column, last_column;
    int64_t height;
    uint32_t part;
    int short_of_room;
} Toggles;

static void seen_column(Toggles *out, int64_t column) {
    if (column < out->first_column) out->first_column = column;
    if (column > out->last_column) out->last_column = column;
}

/* rleFrPoly's row of a step whose smaller y is yd: `(yd + .5) / 5 - .5` within [0, height],
 * rounded up. That is (yd - 2) / 5 rounded up, whole where yd is 2 modulo 5 (where the doubles
 * are exact) and otherwise at least a fifth from a whole number (far more than their rounding
 * moves them): floor((yd + 2) / 5), within [0, height]. */
static uint32_t row_of(int64_t yd, int64_t height) {
    int64_t row = yd + 2 < 0 ? 0 : (yd + 2) / 5;
    return (uint32_t)(row > height ? height : row);
}

/* A toggle at `column`, on the row of yd (only counted where `at` is NULL). */
static void toggle(Toggles *out, int64_t column, int64_t yd) {
    seen_column(out, column);
    if (out->at == NULL) {
        out->count++;
        return;
    }
    if (out->count == out->room) {
        out->short_of_room = 1;
        return;
    }
    out->at[out->count++] = (Toggle){(uint32_t)column, row_of(yd, out->height), out->part};
}

/* rleFrPoly's step from (xa, ya) to (xb, yb) of its walk, where x moved: kept when
 * `(xd + .5) / 5 - .5`, xd the smaller x (the new one less 1 when x rose), is a column of the
 * image (xd is 2 modulo 5); its row is that of the smaller y. */
static void step(Toggles *out, int64_t xa, int64_t ya, int64_t xb, int64_t yb) {
    int64_t xd = xb < xa ? xb : xb - 1;
    if (xd < 2 || (xd - 2) % 5 != 0) return;
    int64_t column = (xd - 2) / 5;
    if (column >= out->low_column && column <= out->high_column) toggle(out, column, ya < yb ? ya : yb);
}

/* The step between points t_a and t_b (neighbours) of an edge, in the order it is walked. */
static void step_within(Toggles *out, const Edge *e, int64_t t_a, int64_t t_b) {
    int64_t xa, ya, xb, yb;
    point_at(e, e->flip ? t_b : t_a, &xa, &ya);
    point_at(e, e->flip ? t_a : t_b, &xb, &yb);
    step(out, xa, ya, xb, yb);
}

/* The values m = 5 * column + 2 of the columns wanted from `low` to `high`: the first, and how
 * many (counted, with their columns, when only counting). */
static int64_t columns_between(Toggles *out, int64_t low, int64_t high, int64_t *first) {
    if (low < 5 * out->low_column + 2) low = 5 * out->low_column + 2;
    if (high > 5 * out->high_column + 2) high = 5 * out->high_column + 2;
    *first = low + (((2 - low) % 5) + 5) % 5;
    int64_t n = *first > high ? 0 : (high - *first) / 5 + 1;
    if (out->at == NULL && n > 0) {
        out->count += n;
        seen_column(out, (*first - 2) / 5);
        seen_column(out, (*first - 2) / 5 + n - 1);
    }
    return n;
}

/* Walking along x, u rises by one a step: the steps t -> t + 1 that cross a column are those
 * where u(t) = start_u + t is one (whichever way the edge is walked, xd is u(t)). */
static void crossings_along_x(Toggles *out, const Edge *e) {
    int64_t first, n = columns_between(out, e->start_u, e->start_u + e->length - 1, &first);
    if (out->at == NULL) return;
    for (int64_t k = 0, t = first - e->start_u; k < n; k++, t += 5) {
        int64_t before = across(e, t), after = across(e, t + 1);
        toggle(out, (first - 2) / 5 + k, before < after ? before : after);
    }
}

/* Whether the across coordinate has gone past m by step t (above it when rising, at or below it
 * when falling): false at t = 0, true at t = length, and once true, true on (it is monotone). */
static int past(const Edge *e, int64_t t, int64_t m, int rising) {
    int64_t x = across(e, t);
    return rising ? x > m : x <= m;
}

/* The first step t in [1, length] past m, looked for from the guess of the exact line (float
 * rounding puts it a step or two away) and, should it not be there, by bisection. */
static int64_t first_past(const Edge *e, int64_t m, int rising) {
    int64_t low = 1, high = e->length;
    double guess = ceil(((double)m + .5 - (double)e->start_v) / e->slope);
    int64_t near = guess < 1 ? 1 : guess > (double)high ? high : (int64_t)guess;
    int64_t above = near + 2 > high ? high : near + 2, below = near - 3;
    if (past(e, above, m, rising)) high = above; else low = above + 1;
    if (below >= low && below < high) {
        if (past(e, below, m, rising)) high = below; else low = below + 1;
    }
    while (low < high) {
        int64_t middle = low + (high - low) / 2;
        if (past(e, middle, m, rising)) high = middle; else low = middle + 1;
    }
    return low;
}

/* Walking along y, x moves by at most a step a step (by two only where float rounding at
 * coordinates near int's range says so): for each column value m it passes, the one step
 * where it goes past m (kept by `step` only when that step's xd is m). */
static void crossings_along_y(Toggles *out, const Edge *e) {
    int64_t x_first = across(e, 0), x_last = across(e, e->length);
    if (x_first == x_last) return;
    int rising = x_last > x_first;
    int64_t first, n = columns_between(out, rising ? x_first : x_last, (rising ? x_last : x_first) - 1, &first);
    if (out->at == NULL) return;
    for (int64_t k = 0; k < n; k++) {
        int64_t t = first_past(e, first + 5 * k, rising);
        step_within(out, e, t - 1, t);
    }
}

/* A part's toggles: every edge's (the last point back to the first), and the steps between one
 * edge's last point walked and the next's first (the same point, unless rounding says not). */
static void part_toggles(Toggles *out, const double *xy, int64_t first, int64_t last) {
    int64_t previous_x = 0, previous_y = 0;
    for (int64_t j = first; j < last; j++) {
        int64_t k = j + 1 < last ? j + 1 : first;
        Edge e = edge_of(c_int(SCALE * xy[2 * j] + .5), c_int(SCALE * xy[2 * j + 1] + .5),
                         c_int(SCALE * xy[2 * k] + .5), c_int(SCALE * xy[2 * k + 1] + .5));
        int64_t x, y;
        point_at(&e, e.flip ? e.length : 0, &x, &y);
        if (j > first && x != previous_x) step(out, previous_x, previous_y, x, y);
        if (e.along_x) crossings_along_x(out, &e); else crossings_along_y(out, &e);
        point_at(&e, e.flip ? 0 : e.length, &previous_x, &previous_y);
    }
}

/* The polygons: object i is the parts `row_offsets[i]:row_offsets[i + 1]`, part p the points
 * `xy[part_offsets[p]:part_offsets[p + 1]]` ((x, y) pairs), on an image of `height[i]` x
 * `width[i]`. */
typedef struct {
    const double *xy;
    const int64_t *part_offsets, *row_offsets, *height, *width;
} Polygons;

/* The toggles of object i in the columns `low` to `high` (`out->at` NULL: counted). */
static void object_toggles(Toggles *out, const Polygons *in, int64_t i, int64_t low, int64_t high) {
    out->count = 0;
    out->short_of_room = 0;
    out->low_column = low;
    out->high_column = high;
    out->first_column = INT64_MAX;
    out->last_column = -1;
    out->height = in->height[i];
    out->part = 0;
    for (int64_t p = in->row_offsets[i]; p < in->row_offsets[i + 1]; p++, out->part++)
        part_toggles(out, in->xy, in->part_offsets[p], in->part_offsets[p + 1]);
}

/* Whether an object's image can be drawn: at least a pixel, at most as many as 32-bit runs hold. */
static int drawable(int64_t height, int64_t width) {
    return height >= 1 && width >= 1 && height <= MAX_PIXELS && width <= MAX_PIXELS / height;
}

/* Offsets that index their arrays: non-decreasing from 0, the last at most `size`. */
static int offsets_fit(const int64_t *offsets, int64_t n, int64_t size) {
    if (offsets[0] < 0) return 0;
    for (int64_t i = 0; i < n; i++) if (offsets[i + 1] < offsets[i]) return 0;
    return offsets[n] <= size;
}

static int inputs_fit(int64_t points, const int64_t *part_offsets, int64_t parts, const int64_t *row_offsets, int64_t n) {
    return offsets_fit(row_offsets, n, parts) && offsets_fit(part_offsets, parts, points);
}

/* For each object (see `Polygons`) room enough for its runs: one more than its toggles, at most
 * one more than its pixels, and two for every RUN_PIECE pixels (a longer run's pieces, `run_to`);
 * 0 for an image that cannot be drawn. Returns 0, or -1 where the offsets do not index the
 * arrays. */
int64_t polygon_run_bounds(const double *xy, int64_t points, const int64_t *part_offsets, int64_t parts,
                           const int64_t *row_offsets, int64_t n, const int64_t *height, const int64_t *width,
                           int64_t *bounds) {
    if (!inputs_fit(points, part_offsets, parts, row_offsets, n)) return -1;
    Polygons in = {xy, part_offsets, row_offsets, height, width};
    Toggles out = {0};
    for (int64_t i = 0; i < n; i++) {
        bounds[i] = 0;
        if (!drawable(height[i], width[i])) continue;
        object_toggles(&out, &in, i, 0, width[i] - 1);
        int64_t pixels = height[i] * width[i];
        bounds[i] = (out.count < pixels ? out.count : pixels) + 1 + 2 * (pixels / RUN_PIECE);
    }
    return 0;
}

/* The toggles sorted by column (counted into `buckets`, one per column from `first_column`),
 * then by row within a column (few share one). */
static void sorted(const Toggles *found, uint32_t *buckets, Toggle *into) {
    int64_t n = found->count, columns = n ? found->last_column - found->first_column + 1 : 0;
    const Toggle *toggles = found->at;
    memset(buckets, 0, sizeof(uint32_t) * (size_t)(columns + 1));
    for (int64_t k = 0; k < n; k++) buckets[toggles[k].column - found->first_column + 1]++;
    for (int64_t c = 0; c < columns; c++) buckets[c + 1] += buckets[c];
    for (int64_t k = 0; k < n; k++) into[buckets[toggles[k].column - found->first_column]++] = toggles[k];
    for (int64_t k = 1; k < n; k++) {
        Toggle moved = into[k];
        int64_t j = k;
        for (; j > 0 && into[j - 1].column == moved.column && into[j - 1].row > moved.row; j--) into[j] = into[j - 1];
        into[j] = moved;
    }
}

/* The union of the parts' masks, swept over their toggles in order: a boundary wherever the
 * count of parts covering a position goes from none to some or back, all the toggles at one
 * position taken together (`position`: the one being taken, -1 before the first). Runs go to
 * `counts`; `short_of_room` once one found no room. */
typedef struct {
    uint8_t *parity;
    int64_t covering, position, covered_before, last_boundary;
    uint16_t *counts;
    int64_t runs, room;
    int short_of_room;
} Sweep;

/* A run, in 16 bits: a longer one as its remainder, then (0, RUN_PIECE) pairs, an empty run of
 * the other value between two pieces (the same pixels; `run_store.c`). */
static void run_to(Sweep *s, int64_t position) {
    int64_t length = position - s->last_boundary;
    int64_t pieces = length > RUN_PIECE ? (length - 1) / RUN_PIECE : 0;
    if (1 + 2 * pieces > s->room - s->runs) {
        s->short_of_room = 1;
        return;
    }
    s->counts[s->runs++] = (uint16_t)(length - pieces * RUN_PIECE);
    for (int64_t p = 0; p < pieces; p++) {
        s->counts[s->runs++] = 0;
        s->counts[s->runs++] = RUN_PIECE;
    }
    s->last_boundary = position;
}

/* The position being taken is done: a boundary there if coverage changed. */
static void settle(Sweep *s) {
    if (s->position >= 0 && (s->covering > 0) != s->covered_before) run_to(s, s->position);
}

static void sweep(Sweep *s, const Toggle *toggles, int64_t n, int64_t height, int64_t pixels) {
    for (int64_t k = 0; k < n; k++) {
        int64_t position = (int64_t)toggles[k].column * height + toggles[k].row;
        if (position >= pixels) return; /* toggles at the image's end change nothing */
        if (position != s->position) {
            settle(s);
            s->position = position;
            s->covered_before = s->covering > 0;
        }
        s->parity[toggles[k].part] ^= 1;
        s->covering += s->parity[toggles[k].part] ? 1 : -1;
    }
}

/* The toggles found, sorted and swept. */
static void swept(Sweep *s, Toggles *found, uint32_t *buckets, Toggle *ordered, int64_t pixels) {
    sorted(found, buckets, ordered);
    sweep(s, ordered, found->count, found->height, pixels);
}

/* Object i's toggles taken in bands of `band` columns, from the first column that has any to
 * the last (counted first into `out`): each edge brings at most a toggle a column of the band
 * and one between edges, so that `band` + 1 toggles an edge fit the room. Returns -1 where one
 * column does not. */
static int banded(Sweep *s, Toggles *out, const Polygons *in, int64_t i, int64_t band, uint32_t *buckets,
                  Toggle *ordered) {
    Toggle *found = out->at;
    out->at = NULL;
    object_toggles(out, in, i, 0, in->width[i] - 1);
    int64_t low = out->first_column, high = out->last_column;
    if (band < 1) return -1;
    out->at = found;
    for (int64_t first = low; first <= high; first += band) {
        object_toggles(out, in, i, first, first + band - 1 < high ? first + band - 1 : high);
        if (out->short_of_room) return -1;
        swept(s, out, buckets, ordered, in->height[i] * in->width[i]);
    }
    return 0;
}

/* Object i's runs into `s`: its toggles found at once where they fit the room, else in bands
 * of columns (`banded`), so that the scratch never grows with the image or the points' reach.
 * Returns -1 where the room cannot hold one column of the object's toggles. */
static int object_runs(Sweep *s, const Polygons *in, int64_t i, Toggle *found, Toggle *ordered, int64_t room,
                       uint32_t *buckets) {
    int64_t pixels = in->height[i] * in->width[i];
    int64_t edges = in->part_offsets[in->row_offsets[i + 1]] - in->part_offsets[in->row_offsets[i]];
    Toggles out = {.at = found, .room = room};
    object_toggles(&out, in, i, 0, in->width[i] - 1);
    if (!out.short_of_room && (out.count == 0 || out.last_column - out.first_column + 1 <= room))
        swept(s, &out, buckets, ordered, pixels);
    else if (banded(s, &out, in, i, room / edges - 1, buckets, ordered))
        return -1;
    settle(s);
    run_to(s, pixels);
    return 0;
}

/* The runs of objects `first` on (see `Polygons`), each after the one before from `counts[0]`
 * (room for `capacity`), how many in `lengths[i]` (0 for an image that cannot be drawn), until
 * one finds no room. Scratch: `toggles` for 2 x `room` toggles (3 x uint32 each), `buckets` for
 * `room` + 1, `parity` (zeros) for `part_room` parts. Returns the objects written from `first`,
 * or -1 where the offsets do not index the arrays, an object has more parts than `part_room` or
 * more edges than half of `room`. */
int64_t polygon_runs(const double *xy, int64_t points, const int64_t *part_offsets, int64_t parts,
                     const int64_t *row_offsets, int64_t n, const int64_t *height, const int64_t *width,
                     int64_t first, uint32_t *toggles, int64_t room, uint32_t *buckets, uint8_t *parity,
                     int64_t part_room, uint16_t *counts, int64_t capacity, int64_t *lengths) {
    if (!inputs_fit(points, part_offsets, parts, row_offsets, n) || first < 0) return -1;
    Polygons in = {xy, part_offsets, row_offsets, height, width};
    Toggle *found = (Toggle *)toggles, *ordered = found + room;
    int64_t written = 0;
    for (int64_t i = first; i < n; i++) {
        lengths[i] = 0;
        if (!drawable(height[i], width[i])) continue;
        int64_t object_parts = row_offsets[i + 1] - row_offsets[i];
        if (object_parts > part_room) return -1;
        Sweep s = {parity, 0, -1, 0, 0, counts + written, 0, capacity - written, 0};
        int failed = object_runs(&s, &in, i, found, ordered, room, buckets);
        memset(parity, 0, (size_t)object_parts);
        if (failed) return -1;
        if (s.short_of_room) return i - first;
        lengths[i] = s.runs;
        written += s.runs;
    }
    return n - first;
}
