/* Each GT box's window: the predictions of its image whose x_min lies between two bounds. */
#include <stdint.h>

/* Runs this long are sorted by insertion before they are merged. */
#define RUN 16

/* Positions [from, to) of (key, order) sorted by key, stably (equal keys keep their order): runs
 * by insertion, then merged pass by pass between the arrays and (key_scratch, scratch). */
static void sort_by_key(double *key, int64_t *order, double *key_scratch, int64_t *scratch, int64_t from,
                        int64_t to) {
    for (int64_t run = from; run < to; run += RUN) {
        int64_t end = run + RUN < to ? run + RUN : to;
        for (int64_t i = run + 1; i < end; i++) {
            double k = key[i];
            int64_t o = order[i], j = i;
            for (; j > run && k < key[j - 1]; j--) {
                key[j] = key[j - 1];
                order[j] = order[j - 1];
            }
            key[j] = k;
            order[j] = o;
        }
    }
    double *key_in = key, *key_out = key_scratch;
    int64_t *in = order, *out = scratch;
    for (int64_t width = RUN; width < to - from; width *= 2) {
        for (int64_t left = from; left < to; left += 2 * width) {
            int64_t middle = left + width < to ? left + width : to;
            int64_t right = middle + width < to ? middle + width : to;
            int64_t a = left, b = middle, k = left;
            while (a < middle && b < right) {
                /* Without a branch: which side goes next is as good as random. */
                int64_t right_first = key_in[b] < key_in[a];
                int64_t take = right_first ? b : a;
                key_out[k] = key_in[take];
                out[k++] = in[take];
                b += right_first;
                a += 1 - right_first;
            }
            for (; a < middle; a++, k++) key_out[k] = key_in[a], out[k] = in[a];
            for (; b < right; b++, k++) key_out[k] = key_in[b], out[k] = in[b];
        }
        double *key_swap = key_in;
        int64_t *swap = in;
        key_in = key_out, key_out = key_swap, in = out, out = swap;
    }
    if (in != order) {
        for (int64_t k = from; k < to; k++) key[k] = key_in[k], order[k] = in[k];
    }
}

/* The first position in [from, to) whose key is not below `bound` (`above`: is above it); `to`
 * when none. The keys are sorted. */
static int64_t first_past(const double *key, int64_t from, int64_t to, double bound, int above) {
    while (from < to) {
        int64_t middle = from + (to - from) / 2;
        double x = key[middle];
        if (above ? !(x > bound) : x < bound) from = middle + 1;
        else to = middle;
    }
    return from;
}

/* The predictions (pred_image[p] < n_images, x0[p]) ordered by image, then x0, then row into
 * `order` (n_pred; `scratch`, `key` and `key_scratch` as long, `image_start` n_images + 1); GT box
 * g of image gt_image[g] gets the positions [start[g], stop[g]) of its image's predictions with
 * low[g] <= x0 <= high[g]. Returns 0, or -1 (nothing to be read) when an image index is not below
 * n_images. */
int64_t x_windows(const double *x0, const int64_t *pred_image, int64_t n_pred, const int64_t *gt_image,
                  const double *low, const double *high, int64_t n_gt, int64_t n_images, int64_t *image_start,
                  int64_t *order, int64_t *scratch, double *key, double *key_scratch, int64_t *start,
                  int64_t *stop) {
    for (int64_t i = 0; i <= n_images; i++) image_start[i] = 0;
    for (int64_t p = 0; p < n_pred; p++) {
        if (pred_image[p] < 0 || pred_image[p] >= n_images) return -1;
        image_start[pred_image[p] + 1]++;
    }
    for (int64_t g = 0; g < n_gt; g++) {
        if (gt_image[g] < 0 || gt_image[g] >= n_images) return -1;
    }
    for (int64_t i = 0; i < n_images; i++) image_start[i + 1] += image_start[i];
    /* Rows placed image by image in row order, image_start[i] moving to where image i's next goes. */
    for (int64_t p = 0; p < n_pred; p++) {
        int64_t *next = &image_start[pred_image[p]];
        order[*next] = p;
        key[*next] = x0[p];
        (*next)++;
    }
    /* Each image_start[i] now holds where image i ends: shift back to starts. */
    for (int64_t i = n_images; i > 0; i--) image_start[i] = image_start[i - 1];
    image_start[0] = 0;
    for (int64_t i = 0; i < n_images; i++) {
        sort_by_key(key, order, key_scratch, scratch, image_start[i], image_start[i + 1]);
    }
    for (int64_t g = 0; g < n_gt; g++) {
        int64_t from = image_start[gt_image[g]], to = image_start[gt_image[g] + 1];
        start[g] = first_past(key, from, to, low[g], 0);
        stop[g] = first_past(key, start[g], to, high[g], 1);
    }
    return 0;
}
