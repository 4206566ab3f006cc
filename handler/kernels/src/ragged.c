/* Rows of a ragged column (row r's items are items[offsets[r]:offsets[r + 1]]) gathered in a given
 * order, each row's items copied as one block: no position per item. */
#include <stdint.h>
#include <string.h>

/* Rows `rows[i]`, i < n, of a column of `n_items` items of `item_size` bytes and `n_rows` rows,
 * copied one after the other into `out`, which has room for `room` items. Returns the items
 * written, or -1 (nothing more written) at the first row that is not in the column, whose
 * offsets do not ascend within it, or that does not fit in the room left. */
int64_t ragged_gather(const uint8_t *items, int64_t item_size, int64_t n_items, const int64_t *offsets,
                      int64_t n_rows, const int64_t *rows, int64_t n, uint8_t *out, int64_t room) {
    int64_t written = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t r = rows[i];
        if (r < 0 || r >= n_rows) return -1;
        int64_t first = offsets[r], last = offsets[r + 1];
        if (first < 0 || last < first || last > n_items || last - first > room - written) return -1;
        if (last > first)
            memcpy(out + written * item_size, items + first * item_size, (size_t)((last - first) * item_size));
        written += last - first;
    }
    return written;
}
