/* COCO's compressed RLE strings (pycocotools' rleFrString), decoded string after string. */
#include <stdint.h>

/* Each run is written in 5-bit groups, least significant first, a sixth bit saying another group
 * follows and the last group's fifth bit the sign; from the fourth run on, the difference from the
 * run two before. Beyond 7 groups no 32-bit count (or difference of two) is written. */
#define MAX_GROUPS 7

/* Strings `text[bounds[i]:bounds[i + 1]]`, i < n, decoded into `counts` (room for as many values
 * as characters): string i's `lengths[i]` runs, and `readable[i]` 0 where it cannot be read (a
 * character outside the alphabet, its last run incomplete, a run too long or out of a count's
 * range, or no character at all). The runs of a string that cannot be read are not written.
 * Returns the number of runs written, or -1 for bounds that do not lie in order within the text. */
int64_t rle_decode_strings(const uint8_t *text, int64_t text_length, const int64_t *bounds, int64_t n,
                           uint32_t *counts, int64_t *lengths, uint8_t *readable) {
    /* The strings lie one after the other within the text, so their runs fit in `counts`. */
    if (n > 0 && (bounds[0] < 0 || bounds[n] > text_length)) return -1;
    for (int64_t i = 0; i < n; i++)
        if (bounds[i + 1] < bounds[i]) return -1;
    int64_t written = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t first = written, p = bounds[i], end = bounds[i + 1];
        int ok = end > p;
        while (ok && p < end) {
            int64_t value = 0;
            int groups = 0, more = 1;
            while (more) {
                if (p == end || groups == MAX_GROUPS) { ok = 0; break; }
                uint8_t c = (uint8_t)(text[p++] - 48);
                if (c >= 64) { ok = 0; break; }
                value |= (int64_t)(c & 0x1f) << (5 * groups);
                groups++;
                more = c & 0x20;
                if (!more && (c & 0x10)) value -= (int64_t)1 << (5 * groups);
            }
            if (!ok) break;
            int64_t m = written - first;
            if (m > 2) value += counts[written - 2];
            if (value < 0 || value > (int64_t)UINT32_MAX) { ok = 0; break; }
            counts[written++] = (uint32_t)value;
        }
        if (!ok) written = first;
        lengths[i] = written - first;
        readable[i] = (uint8_t)ok;
    }
    return written;
}
