/* The candidate pairs of GT boxes with the predictions of their windows, and their IoU. */
#include <stdint.h>

/* numpy's minimum and maximum: a NaN on either side gives NaN. */
static inline double minimum(double a, double b) { return (a <= b || a != a) ? a : b; }
static inline double maximum(double a, double b) { return (a >= b || a != a) ? a : b; }

/* Axis-aligned boxes: row i's x_min, y_min, x_max, y_max at xyxy[4i..4i+3], its area at area[i]. */
typedef struct {
    const double *xyxy, *area;
    int64_t n;
} Boxes;

/* numpy's maximum(v, 0.0) as it runs here (x86's maxpd gives its second operand for two zeros):
 * a non-positive overlap's positive part is +0.0, whatever the sign of its zero; NaN stays. */
static inline double positive_part(double v) { return (v > 0 || v != v) ? v : 0.0; }

/* The IoU as `engine/iou.py` computes it, operation for operation, GT box first: the signed
 * overlaps, their positive parts multiplied, over the union; 0 where the union is not positive. */
static inline double iou_of(const Boxes *gt, int64_t g, const Boxes *pred, int64_t p, double height) {
    const double *a = gt->xyxy + 4 * g, *b = pred->xyxy + 4 * p;
    double width = minimum(a[2], b[2]) - maximum(a[0], b[0]);
    double intersection = positive_part(width) * positive_part(height);
    double union_ = gt->area[g] + pred->area[p] - intersection;
    return union_ > 0 ? intersection / union_ : 0.0;
}

/* Where the pairs go, and how many fit. */
typedef struct {
    int64_t *g, *position;
    double *iou;
    int64_t capacity;
} Pairs;

/* For GT rows first <= g < last, the predictions at positions start[g] .. start[g] + count[g] - 1
 * (position q being prediction row rows[q], q < n_positions): a pair whose y-overlap is at least
 * min_height[g] and whose IoU is at least `keep` is written (GT row, position, IoU), in row then
 * position order. Returns the number written, or -1 (what was written is not to be read) when a
 * row, a window or the output would leave its array. */
int64_t window_pairs(const double *gt_xyxy, const double *gt_area, int64_t n_gt, const double *pred_xyxy,
                     const double *pred_area, int64_t n_pred, const int64_t *rows, int64_t n_positions,
                     const int64_t *start, const int64_t *count, const double *min_height, int64_t first,
                     int64_t last, double keep, int64_t *out_g, int64_t *out_position, double *out_iou,
                     int64_t capacity) {
    Boxes gt = {gt_xyxy, gt_area, n_gt}, pred = {pred_xyxy, pred_area, n_pred};
    Pairs out = {out_g, out_position, out_iou, capacity};
    if (first < 0 || last > gt.n) return -1;
    int64_t written = 0;
    for (int64_t g = first; g < last; g++) {
        int64_t from = start[g];
        if (from < 0 || count[g] < 0 || from > n_positions - count[g]) return -1;
        const double *a = gt.xyxy + 4 * g;
        for (int64_t q = from; q < from + count[g]; q++) {
            int64_t p = rows[q];
            if (p < 0 || p >= pred.n) return -1;
            const double *b = pred.xyxy + 4 * p;
            double height = minimum(a[3], b[3]) - maximum(a[1], b[1]);
            if (!(height >= min_height[g])) continue;
            double iou = iou_of(&gt, g, &pred, p, height);
            if (!(iou >= keep)) continue;
            if (written == out.capacity) return -1;
            out.g[written] = g;
            out.position[written] = q;
            out.iou[written] = iou;
            written++;
        }
    }
    return written;
}
