/* Greedy one-to-one matching over candidate pairs already in the greedy order. */
#include <stdint.h>

/* Pairs k < n, (gt[k], pred[k]) at iou[k], in the greedy order (IoU descending, then prediction,
 * then GT): each pair is taken when neither of its boxes is taken yet, which is the sequential
 * greedy by definition. With `level`, only the pairs whose level[k] > `above` are matched (a
 * confidence threshold's subset, still in order). `gt_match` (n_gt) and `pred_match` (n_pred)
 * come filled with -1 and `pred_iou` (n_pred) with NaN; a pair that is taken writes them.
 * Returns the number of pairs taken, or -1 (nothing written) when an index lies outside its
 * table. */
int64_t greedy_match(const int64_t *gt, const int64_t *pred, const double *iou, const int8_t *level,
                     int64_t above, int64_t n, int64_t n_gt, int64_t n_pred, int64_t *gt_match,
                     int64_t *pred_match, double *pred_iou) {
    for (int64_t k = 0; k < n; k++) {
        if (gt[k] < 0 || gt[k] >= n_gt || pred[k] < 0 || pred[k] >= n_pred) return -1;
    }
    int64_t taken = 0;
    for (int64_t k = 0; k < n; k++) {
        if (level && level[k] <= above) continue;
        int64_t g = gt[k], p = pred[k];
        if (gt_match[g] >= 0 || pred_match[p] >= 0) continue;
        gt_match[g] = p;
        pred_match[p] = g;
        pred_iou[p] = iou[k];
        taken++;
    }
    return taken;
}
