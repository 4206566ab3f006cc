/* Masks' runs (COCO's uncompressed RLE) stored in 16 bits: a run longer than RUN_MAX is written as
 * pieces of at most RUN_MAX with an empty run of the other value between two pieces, which leaves
 * every mask's pixels as they were; and read back merged, the empty runs folded away, as
 * pycocotools writes runs. */
#include <stdint.h>

#define RUN_MAX 65535

/* Mask i's runs are `offsets[i]:offsets[i + 1]` of the `n_counts` runs given: whether they are. */
static int runs_inside(const int64_t *offsets, int64_t n_counts, int64_t i) {
    return offsets[i] >= 0 && offsets[i] <= offsets[i + 1] && offsets[i + 1] <= n_counts;
}

/* The 16-bit runs the `n_counts` runs take once each longer one is cut into pieces. */
int64_t runs_narrowed_room(const uint32_t *counts, int64_t n_counts) {
    int64_t room = n_counts;
    for (int64_t r = 0; r < n_counts; r++)
        if (counts[r] > RUN_MAX) room += 2 * (int64_t)((counts[r] - 1) / RUN_MAX);
    return room;
}

/* The runs of the n masks (mask i's `counts[offsets[i]:offsets[i + 1]]`) as 16-bit runs into `out`
 * (room for `room`), a longer run as its remainder then (0, RUN_MAX) pairs; `new_offsets` (n + 1)
 * the masks' runs in `out`. Returns the runs written, or -1 - i at mask i whose runs are not
 * within the counts or do not fit in the room left (nothing more written). */
int64_t runs_narrowed(const uint32_t *counts, int64_t n_counts, const int64_t *offsets, int64_t n, uint16_t *out,
                      int64_t room, int64_t *new_offsets) {
    int64_t written = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!runs_inside(offsets, n_counts, i)) return -1 - i;
        new_offsets[i] = written;
        for (int64_t r = offsets[i]; r < offsets[i + 1]; r++) {
            int64_t pieces = counts[r] > RUN_MAX ? (int64_t)((counts[r] - 1) / RUN_MAX) : 0;
            if (1 + 2 * pieces > room - written) return -1 - i;
            out[written++] = (uint16_t)((int64_t)counts[r] - pieces * RUN_MAX);
            for (int64_t p = 0; p < pieces; p++) {
                out[written++] = 0;
                out[written++] = RUN_MAX;
            }
        }
    }
    new_offsets[n] = written;
    return written;
}

/* The runs of the n masks with each empty run after a mask's first folded away, the run after it
 * added to the one before (`a, 0, b` is `a + b`; a last empty run is left out), into `out` (room
 * for the `n_counts` runs given, never more), `new_offsets` (n + 1) the masks' runs in it.
 * Returns the runs written, or -1 - i at mask i whose runs are not within the counts. */
int64_t runs_merged(const uint16_t *counts, int64_t n_counts, const int64_t *offsets, int64_t n, int64_t *out,
                    int64_t *new_offsets) {
    int64_t written = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!runs_inside(offsets, n_counts, i)) return -1 - i;
        new_offsets[i] = written;
        int64_t first = offsets[i], last = offsets[i + 1];
        for (int64_t r = first; r < last; r++) {
            if (r == first || counts[r] > 0) {
                out[written++] = counts[r];
            } else if (r + 1 < last) {
                out[written - 1] += counts[r + 1];
                r++;
            }
        }
    }
    new_offsets[n] = written;
    return written;
}
