/* The bootstrap's resamples: the per-image counts of the images each resample drew, summed. */
#include <stdint.h>

/* Resample r < rows draws image floor(u[r * n + i] * n) for i < n (a double in [0, 1) each) and
 * adds that image's m counts, counts[image * m .. image * m + m - 1], into summed[r * m ..]. A
 * product that rounds up to n (u a hair below 1, n a power of two) draws the last image; one that
 * is not in [0, n) at all (u outside [0, 1)) the nearest. */
void resample_sums(const double *u, int64_t rows, int64_t n, const int64_t *counts, int64_t m,
                   int64_t *summed) {
    for (int64_t r = 0; r < rows; r++) {
        int64_t *into = summed + r * m;
        const double *draws = u + r * n;
        for (int64_t i = 0; i < n; i++) {
            double x = draws[i] * (double)n;
            int64_t image = !(x >= 0.0) ? 0 : x >= (double)n ? n - 1 : (int64_t)x;
            const int64_t *row = counts + image * m;
            for (int64_t j = 0; j < m; j++) into[j] += row[j];
        }
    }
}
