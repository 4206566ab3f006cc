/* The outlines of masks sampled on a grid of cells (engine/outlines.py): each object's grid sampled
 * from its runs, its boundary edges walked into closed loops and every k-th edge's midpoint kept,
 * object by object: numpy held every object's pixels as intervals and its grid, and labelled the
 * loops by pointer jumping over arrays of every edge of every object. */
#include <stdint.h>
#include <string.h>

/* Directions 0 right, 1 down, 2 left, 3 up (y grows downward). */
static const int64_t DX[4] = {1, 0, -1, 0};
static const int64_t DY[4] = {0, 1, 0, -1};
/* Face d of a cell (0 top, 1 right, 2 bottom, 3 left) is the edge of direction d (clockwise about
 * the cell) from this corner of it. */
static const int64_t FACE_DX[4] = {0, 1, 1, 0};
static const int64_t FACE_DY[4] = {0, 0, 1, 1};

/* The cells of one mask (outline_walk): cell (r, j), at c[(r + 1) * (grid + 2) + j + 1], is 1 where
 * the pixel at columns[j] + rows[r] is the object's. */
static void sample(const uint16_t *counts, int64_t n_counts, const int64_t *offsets, const int64_t *columns,
                   const int64_t *rows, int64_t grid, uint8_t *c) {
    const int64_t lo = offsets[0] < n_counts ? offsets[0] : n_counts;
    const int64_t hi = offsets[1] < n_counts ? offsets[1] : n_counts;
    const uint16_t *run = counts + lo;
    const int64_t runs = hi > lo ? hi - lo : 0;
    int64_t k = 0, end = runs ? run[0] : 0, before = INT64_MIN;  /* run k ends where `end` is */
    for (int64_t j = 0; j < grid; j++) {
        for (int64_t r = 0; r < grid; r++) {
            const int64_t place = columns[j] + rows[r];
            if (place < before) {
                k = 0;
                end = runs ? run[0] : 0;
            }
            before = place;
            while (k < runs && end <= place)
                if (++k < runs) end += run[k];
            c[(r + 1) * (grid + 2) + j + 1] = k < runs && (k & 1);
        }
    }
}

/* Object i's mask is its runs counts[offsets[i]] to counts[offsets[i + 1] - 1] (clamped to the
 * n_counts given): alternating runs of background and object pixels, background first, in
 * column-major order. Its cell (r, j) is in it when the pixel at columns[i * grid + j] +
 * rows[i * grid + r] (its place in the mask) is, in a grid with a border of empty cells; the
 * places ascending, the runs are walked once (a place below the one before starts again).
 * An edge is a face of an object's cell beside an empty cell; an object's edges are numbered face
 * by face, each face's in raster order of its cells. Each edge's successor is the edge leaving its
 * end corner after a right turn, else straight on, else after a left turn. A loop starts at its
 * lowest-numbered edge and loops are taken in the order of those; a loop keeps the midpoints of its
 * edges 0, k, 2k, ... with k = ceil(object's edges / max_points), and is kept only with
 * min_points of them or more. Object i's kept loops go to loop_size[i * capacity ...] (their
 * count to loops[i]) and their points, each (2 x, 2 y) in corner units, to
 * doubled[2 * i * capacity ...] (their count to points[i]); a loop that would not fit is dropped.
 * `scratch` is 20 * grid * grid + 4 * (grid + 1) * (grid + 1) entries, the last
 * 4 * (grid + 1) * (grid + 1) all -1 when given (and again on return). */
void outline_walk(const uint16_t *counts, int64_t n_counts, const int64_t *offsets, int64_t n,
                  const int64_t *columns, const int64_t *rows, int64_t grid, int64_t max_points,
                  int64_t min_points, int64_t capacity, int64_t *doubled, int64_t *loop_size, int64_t *points,
                  int64_t *loops, int64_t *scratch) {
    const int64_t side = grid + 2, corners = grid + 1, most = 4 * grid * grid;
    int64_t *edge_x = scratch, *edge_y = edge_x + most, *edge_d = edge_y + most, *next = edge_d + most;
    int64_t *seen = next + most, *at = seen + most;
    /* The object's cells with a face on the boundary (raster order) and those faces, as bits:
     * the numbering then looks at these few cells four times, not at every cell. */
    int64_t border[grid * grid];
    uint8_t faces[grid * grid], c[side * side];
    memset(c, 0, sizeof c);
    for (int64_t i = 0; i < n; i++) {
        sample(counts, n_counts, offsets + i, columns + i * grid, rows + i * grid, grid, c);
        int64_t bordering = 0, edges = 0;
        for (int64_t y = 1; y <= grid; y++) {
            for (int64_t x = 1; x <= grid; x++) {
                const uint8_t *cell = c + y * side + x;
                if (!*cell) continue;
                /* face d's neighbour is a quarter turn back from direction d */
                uint8_t bits = (uint8_t)((cell[-side] ^ 1) | (cell[1] ^ 1) << 1 | (cell[side] ^ 1) << 2 |
                                         (cell[-1] ^ 1) << 3);
                if (!bits) continue;
                faces[bordering] = bits;
                border[bordering++] = (y - 1) * grid + x - 1;
            }
        }
        for (int64_t d = 0; d < 4; d++) {
            for (int64_t b = 0; b < bordering; b++) {
                if (!(faces[b] >> d & 1)) continue;
                edge_x[edges] = border[b] % grid + FACE_DX[d];
                edge_y[edges] = border[b] / grid + FACE_DY[d];
                edge_d[edges] = d;
                at[(edge_y[edges] * corners + edge_x[edges]) * 4 + d] = edges;
                edges++;
            }
        }
        for (int64_t e = 0; e < edges; e++) seen[e] = 0;
        for (int64_t e = 0; e < edges; e++) {
            int64_t d = edge_d[e], end = (edge_y[e] + DY[d]) * corners + edge_x[e] + DX[d];
            next[e] = at[end * 4 + (d + 1) % 4];
            if (next[e] < 0) next[e] = at[end * 4 + d];
            if (next[e] < 0) next[e] = at[end * 4 + (d + 3) % 4];
        }
        int64_t k = edges > max_points ? (edges + max_points - 1) / max_points : 1;
        int64_t kept = 0, drawn = 0;
        int64_t *into = doubled + 2 * i * capacity;
        for (int64_t first = 0; first < edges; first++) {
            if (seen[first]) continue;
            int64_t count = 0, place = 0, e = first;
            do {
                seen[e] = 1;
                if (place % k == 0 && kept + count < capacity) {
                    into[2 * (kept + count)] = 2 * edge_x[e] + DX[edge_d[e]];
                    into[2 * (kept + count) + 1] = 2 * edge_y[e] + DY[edge_d[e]];
                    count++;
                }
                place++;
                e = next[e];
            } while (e >= 0 && !seen[e]);
            if (count >= min_points && (place + k - 1) / k == count && drawn < capacity) {
                loop_size[i * capacity + drawn++] = count;
                kept += count;
            }
        }
        points[i] = kept;
        loops[i] = drawn;
        for (int64_t e = 0; e < edges; e++) at[(edge_y[e] * corners + edge_x[e]) * 4 + edge_d[e]] = -1;
    }
}
