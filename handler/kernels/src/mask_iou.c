/* Instance masks as COCO's uncompressed RLE (runs of 0s and 1s, 0s first, column by column):
 * the pixels each mask's runs cover, each mask's area and extent (pycocotools' rleArea,
 * rleToBbox), and the IoU of pairs of masks walked over their runs as pycocotools' rleIou walks
 * them. The runs are 16-bit, a longer run stored as pieces with empty runs between them
 * (`run_store.c`): an empty run is read as any other. */
#include <stdint.h>

/* A mask taller than this (no image is) is read as having no pixels: its columns' products with
 * the height stay far from overflowing. */
#define MAX_HEIGHT ((int64_t)1 << 48)

/* Masks of one table: mask i's runs are `counts[offsets[i]:offsets[i + 1]]`, over `height[i]` x
 * `width[i]` pixels; `area` and `extent` ((n, 4): x0 y0 x1 y1) are `mask_measures`' own. */
typedef struct {
    const uint16_t *counts;
    int64_t n_counts;
    const int64_t *offsets;
    const int64_t *height;
    const int64_t *width;
    const int64_t *area;
    const double *extent;
    int64_t n;
} Masks;

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static double min_double(double a, double b) { return a < b ? a : b; }
static double max_double(double a, double b) { return a > b ? a : b; }

/* Whether mask i's runs lie within the `n_counts` runs given (a kernel reads nothing else). */
static int runs_inside(const int64_t *offsets, int64_t n_counts, int64_t i) {
    return offsets[i] >= 0 && offsets[i] <= offsets[i + 1] && offsets[i + 1] <= n_counts;
}

/* totals[i]: the pixels mask i's runs cover, 0s and 1s (a well-formed mask's are its height x
 * width). Returns -1 - i when mask i's runs are not within the `n_counts` given, else 0. */
int64_t mask_run_totals(const uint16_t *counts, int64_t n_counts, const int64_t *offsets, int64_t n,
                        int64_t *totals) {
    for (int64_t i = 0; i < n; i++) {
        if (!runs_inside(offsets, n_counts, i)) return -1 - i;
        int64_t total = 0;
        for (int64_t r = offsets[i]; r < offsets[i + 1]; r++) total += counts[r];
        totals[i] = total;
    }
    return 0;
}

/* The column of position `p` in a mask `h` pixels high, from `per_column` = 1 / h: a product
 * instead of a division, put right where rounding moved it by one (exact below 2^53). */
static int64_t column_of(int64_t p, int64_t h, double per_column) {
    int64_t column = (int64_t)((double)p * per_column);
    if (column * h > p) return column - 1;
    if ((column + 1) * h <= p) return column + 1;
    return column;
}

/* The area and extent of every mask (`area`, `extent`: the outputs): the extent `[x_min, y_min,
 * x_max + 1, y_max + 1]` of the pixels of its runs of 1s that are not empty, a run that goes on
 * into the next column covering every row; zeros for a mask without pixels (or of no height, or
 * taller than MAX_HEIGHT). Returns -1 - i when mask i's runs are not within the `n_counts` given
 * (nothing is read for it), else 0. */
int64_t mask_measures(const uint16_t *counts, int64_t n_counts, const int64_t *offsets,
                      const int64_t *height, int64_t n, int64_t *area, double *extent) {
    for (int64_t i = 0; i < n; i++) {
        double *box = extent + 4 * i;
        box[0] = box[1] = box[2] = box[3] = 0.0;
        area[i] = 0;
        if (!runs_inside(offsets, n_counts, i)) return -1 - i;
        int64_t h = height[i], y0 = INT64_MAX, y1 = 0, pixels = 0, position = 0;
        int64_t first_start = -1, last_stop = 0;
        if (h <= 0 || h > MAX_HEIGHT) continue;
        double per_column = 1.0 / (double)h;
        /* The runs in pairs: a run of 0s, then a run of 1s (a last run of 0s ends nothing). The
         * runs come in order: the first run of 1s starts the extent's columns, the last ends them. */
        const uint16_t *run = counts + offsets[i], *end = counts + offsets[i + 1];
        for (; end - run >= 2; run += 2) {
            int64_t start = position + run[0];
            position = start + run[1];
            if (run[1] == 0) continue;
            if (first_start < 0) first_start = start;
            last_stop = position;
            int64_t top = start - column_of(start, h, per_column) * h;
            int one_column = top + run[1] <= h;
            pixels += run[1];
            y0 = min64(y0, one_column ? top : 0);
            y1 = max64(y1, one_column ? top + run[1] : h);
        }
        area[i] = pixels;
        if (pixels > 0) {
            box[0] = (double)column_of(first_start, h, per_column);
            box[1] = (double)y0;
            box[2] = (double)(column_of(last_stop - 1, h, per_column) + 1);
            box[3] = (double)y1;
        }
    }
    return 0;
}

/* A walk over one mask's runs of 1s: the current one covers positions [start, stop); `next` is
 * the run of 0s after it (runs are read in pairs, a run of 0s and the run of 1s after it). */
typedef struct {
    const uint16_t *next;
    const uint16_t *end;
    int64_t start;
    int64_t stop;
} Walk;

static Walk walk_from(const Masks *m, int64_t i) {
    Walk w = {m->counts + m->offsets[i], m->counts + m->offsets[i + 1], 0, 0};
    return w;
}

/* Passes every pair of runs whose 1s end at or before `position`: none of them reaches it. */
static void skip_to(Walk *w, int64_t position) {
    while (w->end - w->next >= 2) {
        int64_t stop = w->stop + (int64_t)w->next[0] + (int64_t)w->next[1];
        if (stop > position) return;
        w->stop = stop;
        w->next += 2;
    }
}

/* Moves to the next run of 1s that is not empty; 0 when there is none. */
static int advance(Walk *w) {
    while (w->end - w->next >= 2) {
        w->start = w->stop + (int64_t)w->next[0];
        w->stop = w->start + (int64_t)w->next[1];
        w->next += 2;
        if (w->stop > w->start) return 1;
    }
    return 0;
}

/* The pixels masks a and b share, both walked from the first column both extents span: each
 * run of 1s of one against those of the other it overlaps, the one that ends first moved on. */
static int64_t shared_pixels(Walk a, Walk b, int64_t from) {
    skip_to(&a, from);
    skip_to(&b, from);
    int64_t shared = 0;
    int more_a = advance(&a), more_b = advance(&b);
    while (more_a && more_b) {
        int64_t inside = min64(a.stop, b.stop) - max64(a.start, b.start);
        if (inside > 0) shared += inside;
        if (a.stop <= b.stop)
            more_a = advance(&a);
        else
            more_b = advance(&b);
    }
    return shared;
}

/* iou[k], k < n_pairs: the IoU of masks `gt[g[k]]` and `pred[p[k]]` (pycocotools' rleIou, not
 * crowd: the pixels in both over those in either), 0 where none are in both, where the two
 * masks' sizes differ, or where the pair cannot reach `floor`: its intersection is at most the
 * smaller area and the overlap of the extents, and a pair whose IoU with that bound is below
 * `floor` is not walked. Returns -1 - k when pair k names a mask outside its table or one whose
 * runs are not within its counts (pairs from k on are not written), else 0. */
int64_t mask_pair_ious(const Masks *gt, const Masks *pred, const int64_t *g, const int64_t *p,
                       int64_t n_pairs, double floor, double *iou) {
    for (int64_t k = 0; k < n_pairs; k++) {
        int64_t i = g[k], j = p[k];
        if (i < 0 || i >= gt->n || j < 0 || j >= pred->n || !runs_inside(gt->offsets, gt->n_counts, i) ||
            !runs_inside(pred->offsets, pred->n_counts, j))
            return -1 - k;
        iou[k] = 0.0;
        int64_t h = gt->height[i];
        if (h != pred->height[j] || gt->width[i] != pred->width[j]) continue;
        const double *a = gt->extent + 4 * i, *b = pred->extent + 4 * j;
        double columns = min_double(a[2], b[2]) - max_double(a[0], b[0]);
        double rows = min_double(a[3], b[3]) - max_double(a[1], b[1]);
        /* Whole pixel counts, exact in double: the same division as pycocotools'. */
        double area_a = (double)gt->area[i], area_b = (double)pred->area[j];
        if (columns <= 0 || rows <= 0 || area_a <= 0 || area_b <= 0) continue;
        double bound = min_double(min_double(area_a, area_b), columns * rows);
        if (bound / (area_a + area_b - bound) < floor) continue;
        Walk walk_a = walk_from(gt, i), walk_b = walk_from(pred, j);
        /* A mask paired with itself (a table searched against itself: its duplicates) is its area. */
        int same = walk_a.next == walk_b.next && walk_a.end == walk_b.end;
        int64_t from = (int64_t)max_double(a[0], b[0]) * h;
        double shared = same ? area_a : (double)shared_pixels(walk_a, walk_b, from);
        if (shared > 0) iou[k] = shared / (area_a + area_b - shared);
    }
    return 0;
}
