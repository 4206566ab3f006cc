/* Greedy one-to-one matching over candidate pairs already in the greedy order, at up to 32
 * confidence thresholds at once. */
#include <stdint.h>

/* Pairs k < n, (gt[k], pred[k]), in the greedy order (IoU descending, then prediction, then GT):
 * at each threshold, a pair is taken when neither of its boxes is taken yet at that threshold,
 * which is the sequential greedy by definition. Threshold j is bit j: pair k takes part at the
 * thresholds below level[k] (its prediction is kept there).
 * gt_taken (n_gt) and pred_taken (n_pred) come filled with 0 and end with each box's thresholds
 * matched; taken_at[k] gets the thresholds at which pair k is taken. Returns 0, or -1 (nothing
 * written) when an index lies outside its table. */
int64_t greedy_match(const int64_t *gt, const int64_t *pred, const int8_t *level, int64_t n, int64_t n_gt,
                     int64_t n_pred, uint32_t *gt_taken, uint32_t *pred_taken, uint32_t *taken_at) {
    for (int64_t k = 0; k < n; k++) {
        if (gt[k] < 0 || gt[k] >= n_gt || pred[k] < 0 || pred[k] >= n_pred) return -1;
    }
    for (int64_t k = 0; k < n; k++) {
        int64_t below = level[k];
        uint32_t kept = below <= 0 ? 0u : below >= 32 ? ~0u : (1u << below) - 1u;
        uint32_t taken = kept & ~gt_taken[gt[k]] & ~pred_taken[pred[k]];
        gt_taken[gt[k]] |= taken;
        pred_taken[pred[k]] |= taken;
        taken_at[k] = taken;
    }
    return 0;
}
