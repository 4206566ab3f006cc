/* interval_hits.c's function, also called by outline_walk.c on each mask's grid of cells. */
#ifndef INTERVAL_HITS_H
#define INTERVAL_HITS_H
#include <stdint.h>

void interval_hits(const int64_t *start, const int64_t *stop, int64_t n_intervals, const int64_t *first,
                   int64_t groups, const int64_t *positions, int64_t per, uint8_t *hit);

#endif
