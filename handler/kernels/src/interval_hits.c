/* Whether positions fall in intervals, group by group: one walk through a group's intervals and its
 * positions together, where a search per position jumps about memory. */
#include "interval_hits.h"

/* Group g's intervals are [start[k], stop[k]) for k from first[g] to first[g + 1] - 1 (ascending,
 * disjoint; clamped to the n_intervals given), its positions positions[g * per] to
 * positions[g * per + per - 1]; hit[g * per + j] is 1 where that position is in one of them. The
 * walk restarts at the group's first interval where a position is below the one before it: any
 * order is answered, ascending positions in a single pass. */
void interval_hits(const int64_t *start, const int64_t *stop, int64_t n_intervals, const int64_t *first,
                   int64_t groups, const int64_t *positions, int64_t per, uint8_t *hit) {
    for (int64_t g = 0; g < groups; g++) {
        int64_t lo = first[g] < 0 ? 0 : first[g];
        int64_t hi = first[g + 1] > n_intervals ? n_intervals : first[g + 1];
        const int64_t *at = positions + g * per;
        uint8_t *out = hit + g * per;
        int64_t k = lo, before = INT64_MIN;
        for (int64_t j = 0; j < per; j++) {
            int64_t p = at[j];
            if (p < before) k = lo;
            before = p;
            while (k < hi && stop[k] <= p) k++;
            out[j] = k < hi && start[k] <= p;
        }
    }
}
