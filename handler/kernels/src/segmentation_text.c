/* COCO's `segmentation` values read from the JSON text they were written as, row after row, into
 * columns: polygons' numbers, RLE's size and its counts (a string unescaped, or a list of runs).
 * No value becomes an object; a row that is not one of these shapes is classified, never parsed. */
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* What a row holds (segmentation_text.py names the same codes). */
enum {
    NO_MASK = 0,           /* null, [], {}, or any value that is neither a list nor an object */
    POLYGONS = 1,          /* lists of at least 3 x, y pairs of finite numbers */
    RLE_STRING = 2,        /* {"size": [h, w], "counts": "compressed"} */
    RLE_RUNS = 3,          /* {"size": [h, w], "counts": [whole numbers]} */
    BAD_POLYGONS = 4,      /* a list that is not such polygons */
    BAD_RLE = 5,           /* an object without a size of two positive integers or such counts */
    RUNS_OUT_OF_RANGE = 6, /* a run below 0 or beyond 32 bits: the runs cannot add up */
    NO_SIZE = 7,           /* polygons on an image whose size is unknown */
    MALFORMED = 8,         /* not JSON (never expected: texts come checked), told as BAD_* */
};

/* pycocotools reads a list of 4 numbers as a box: a polygon has at least 3 points. */
#define MIN_POLYGON_NUMBERS 6
/* A number's text copied for strtod on the stack up to this length, on the heap beyond it. */
#define SHORT_NUMBER 64

typedef struct {
    const uint8_t *at, *end;
} cursor;

/* The columns written, each with its room (never written past) and what is used of it. */
typedef struct {
    double *points;
    int64_t *part_lengths;
    uint8_t *strings;
    uint32_t *runs;
    int64_t room[4], used[4];
    char point; /* the C library's decimal point in the current locale, for strtod */
    int failed; /* -1: a column's room ran out, -2: no memory for a long number */
} columns;

enum { POINTS = 0, PARTS = 1, STRINGS = 2, RUNS = 3 };

/* A JSON number's text: whether it is an integer (no fraction, no exponent), or one of the
 * non-finite values Python's json module writes and reads (NaN, Infinity, -Infinity). */
typedef struct {
    const uint8_t *start, *stop;
    int integer;
    double special; /* 0: none */
} token;

static int is_digit(uint8_t c) { return c >= '0' && c <= '9'; }

static int is_space(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static void skip_spaces(cursor *c) {
    while (c->at < c->end && is_space(*c->at)) c->at++;
}

static int at(const cursor *c, uint8_t expected) { return c->at < c->end && *c->at == expected; }

/* Whether the text at `p` starts with `word`. */
static int starts_with(const uint8_t *p, const uint8_t *end, const char *word) {
    size_t n = strlen(word);
    return (size_t)(end - p) >= n && memcmp(p, word, n) == 0;
}

static int digits(cursor *c) {
    const uint8_t *first = c->at;
    while (c->at < c->end && is_digit(*c->at)) c->at++;
    return c->at > first;
}

/* The number at the cursor, the cursor then after it; 0 (the cursor anywhere) where none is. */
static int number(cursor *c, token *t) {
    t->start = c->at;
    t->integer = 0;
    t->special = 0;
    if (starts_with(c->at, c->end, "NaN")) {
        c->at += 3;
        t->special = NAN;
        return 1;
    }
    int negative = at(c, '-');
    c->at += negative;
    if (starts_with(c->at, c->end, "Infinity")) {
        c->at += 8;
        t->special = negative ? -INFINITY : INFINITY;
        return 1;
    }
    if (at(c, '0')) c->at++;
    else if (!digits(c)) return 0;
    t->integer = 1;
    if (at(c, '.')) {
        c->at++;
        if (!digits(c)) return 0;
        t->integer = 0;
    }
    if (at(c, 'e') || at(c, 'E')) {
        c->at++;
        if (at(c, '+') || at(c, '-')) c->at++;
        if (!digits(c)) return 0;
        t->integer = 0;
    }
    t->stop = c->at;
    return 1;
}

/* Powers of ten a double holds exactly. */
static const double EXACT_POWERS[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                      1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
#define EXACT_POWER_MAX 22
#define EXACT_INTEGER_MAX (UINT64_C(1) << 53)

/* Clinger's fast path: a number of digits d (at most 2^53) times 10^e, |e| <= 22, is one
 * multiplication or division of two doubles held exactly, so correctly rounded as strtod is.
 * 0 where the number is not of that form (then strtod reads it). */
static int quick_value(const token *t, double *value) {
    const uint8_t *p = t->start;
    int negative = *p == '-', fraction = 0;
    uint64_t digits = 0;
    int64_t exponent = 0;
    for (p += negative; p < t->stop && *p != 'e' && *p != 'E'; p++) {
        if (*p == '.') {
            fraction = 1;
            continue;
        }
        if (digits > EXACT_INTEGER_MAX / 10) return 0;
        digits = digits * 10 + (uint64_t)(*p - '0');
        exponent -= fraction;
    }
    if (p < t->stop) { /* e, a sign, digits (a number token has them) */
        int minus = p[1] == '-';
        int64_t written = 0;
        for (p += 1 + (p[1] == '-' || p[1] == '+'); p < t->stop; p++) {
            if (written > EXACT_POWER_MAX * 1000) return 0;
            written = written * 10 + (*p - '0');
        }
        exponent += minus ? -written : written;
    }
    if (digits > EXACT_INTEGER_MAX || exponent < -EXACT_POWER_MAX || exponent > EXACT_POWER_MAX) return 0;
    double read = exponent >= 0 ? (double)digits * EXACT_POWERS[exponent] : (double)digits / EXACT_POWERS[-exponent];
    *value = negative ? -read : read;
    return 1;
}

/* The float CPython gives for the number (`float(json.loads(text))`): exactly read quickly, or
 * strtod on its text, which must read it whole; an integer 0 written `-0` is json's int 0, a
 * positive zero. */
static int number_value(const token *t, columns *o, double *value) {
    if (t->special != 0) {
        *value = t->special;
        return 1;
    }
    size_t n = (size_t)(t->stop - t->start);
    if (t->integer && t->start[n - 1] == '0' && n <= 2 && (n == 1 || t->start[0] == '-')) {
        *value = 0.0;
        return 1;
    }
    if (quick_value(t, value)) return 1;
    char local[SHORT_NUMBER];
    char *copy = n < SHORT_NUMBER ? local : malloc(n + 1);
    if (copy == NULL) {
        o->failed = -2;
        return 0;
    }
    memcpy(copy, t->start, n);
    copy[n] = 0;
    char *point = memchr(copy, '.', n);
    if (point != NULL) *point = o->point;
    char *stop;
    *value = strtod(copy, &stop);
    int whole = stop == copy + n;
    if (copy != local) free(copy);
    return whole;
}

/* An integer number's value; 0 where it is not one or is beyond 64 bits. */
static int integer_value(const token *t, int64_t *value) {
    if (!t->integer) return 0;
    const uint8_t *p = t->start;
    int negative = *p == '-';
    uint64_t magnitude = 0, limit = (uint64_t)INT64_MAX + (uint64_t)negative;
    for (p += negative; p < t->stop; p++) {
        uint64_t digit = (uint64_t)(*p - '0');
        if (magnitude > (limit - digit) / 10) return 0;
        magnitude = magnitude * 10 + digit;
    }
    *value = negative ? (int64_t)(0 - magnitude) : (int64_t)magnitude;
    return 1;
}

/* The string at the cursor (at its opening quote): its contents' bounds, the cursor after it. */
static int string_span(cursor *c, const uint8_t **first, const uint8_t **last) {
    const uint8_t *p = c->at + 1;
    while (p < c->end) {
        if (*p == '"') {
            *first = c->at + 1;
            *last = p;
            c->at = p + 1;
            return 1;
        }
        if (*p == '\\' && c->end - p < 2) return 0;
        p += *p == '\\' ? 2 : 1;
    }
    return 0;
}

static int hex4(const uint8_t *p, const uint8_t *end, unsigned *code) {
    if (end - p < 4) return 0;
    *code = 0;
    for (int k = 0; k < 4; k++) {
        uint8_t h = p[k];
        unsigned d = is_digit(h) ? (unsigned)(h - '0')
                     : (h | 0x20) >= 'a' && (h | 0x20) <= 'f' ? (unsigned)((h | 0x20) - 'a' + 10)
                                                            : 16;
        if (d == 16) return 0;
        *code = *code << 4 | d;
    }
    return 1;
}

/* The string's characters as json.loads reads them, in ASCII with '?' for any other (what
 * `str.encode("ascii", "replace")` gives): one byte per character, so never more than it reads. */
static int64_t unescaped(const uint8_t *p, const uint8_t *end, uint8_t *out) {
    int64_t n = 0;
    while (p < end) {
        uint8_t c = *p++;
        if (c != '\\') {
            if (c < 0x80) out[n++] = c;
            else if (c >= 0xC0) out[n++] = '?'; /* a UTF-8 character's first byte */
            continue;
        }
        if (p == end) break;
        uint8_t e = *p++;
        unsigned code;
        switch (e) {
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'n': out[n++] = '\n'; break;
        case 'r': out[n++] = '\r'; break;
        case 't': out[n++] = '\t'; break;
        case 'u':
            if (!hex4(p, end, &code)) return n;
            p += 4;
            unsigned low;
            /* A high surrogate and a low one after it are one character. */
            if (code >= 0xD800 && code < 0xDC00 && end - p >= 6 && p[0] == '\\' && p[1] == 'u' &&
                hex4(p + 2, end, &low) && low >= 0xDC00 && low < 0xE000)
                p += 6;
            out[n++] = code < 0x80 ? (uint8_t)code : '?';
            break;
        default: out[n++] = e; /* \" \\ \/ */
        }
    }
    return n;
}

/* Whether a key's text (its contents, escapes and all) reads as `name`. */
static int key_is(const uint8_t *first, const uint8_t *last, const char *name) {
    uint8_t read[SHORT_NUMBER];
    size_t n = strlen(name);
    if (last - first > 6 * (int64_t)n) return 0; /* each character at most a \uXXXX escape */
    return unescaped(first, last, read) == (int64_t)n && memcmp(read, name, n) == 0;
}

/* Past one JSON value at the cursor: its strings skipped whole, its brackets balanced. */
static int skip_value(cursor *c) {
    int64_t depth = 0;
    const uint8_t *first = c->at, *unused;
    while (c->at < c->end) {
        uint8_t ch = *c->at;
        if (ch == '"') {
            if (!string_span(c, &unused, &unused)) return 0;
            if (depth == 0) return 1;
            continue;
        }
        if (depth == 0 && (ch == ',' || ch == ']' || ch == '}' || is_space(ch))) return c->at > first;
        if (ch == '[' || ch == '{') depth++;
        if (ch == ']' || ch == '}') depth--;
        c->at++;
        if (depth == 0 && (ch == ']' || ch == '}')) return 1;
    }
    return depth == 0 && c->at > first;
}

/* The polygons of a row (the cursor after its '[', at its first part), their numbers written;
 * `parts` counts them. */
static int polygons(cursor *c, columns *o, int64_t *parts) {
    for (;;) {
        if (!at(c, '[')) return BAD_POLYGONS;
        c->at++;
        skip_spaces(c);
        int64_t count = 0;
        while (!at(c, ']')) {
            token t;
            double value;
            if (!number(c, &t) || !number_value(&t, o, &value) || !isfinite(value)) return BAD_POLYGONS;
            if (o->used[POINTS] == o->room[POINTS]) {
                o->failed = -1;
                return BAD_POLYGONS;
            }
            o->points[o->used[POINTS]++] = value;
            count++;
            skip_spaces(c);
            if (at(c, ',')) {
                c->at++;
                skip_spaces(c);
            } else if (!at(c, ']')) return BAD_POLYGONS;
        }
        c->at++;
        if (count < MIN_POLYGON_NUMBERS || count % 2) return BAD_POLYGONS;
        if (o->used[PARTS] == o->room[PARTS]) {
            o->failed = -1;
            return BAD_POLYGONS;
        }
        o->part_lengths[o->used[PARTS]++] = count;
        (*parts)++;
        skip_spaces(c);
        if (at(c, ']')) {
            c->at++;
            return POLYGONS;
        }
        if (!at(c, ',')) return BAD_POLYGONS;
        c->at++;
        skip_spaces(c);
    }
}

/* An RLE size, `[height, width]` of positive integers, into `size`; else 0, the value skipped. */
static int rle_size(cursor *c, int64_t *size) {
    cursor start = *c;
    token t;
    int64_t read[2];
    int k = 0;
    if (at(c, '[')) {
        c->at++;
        for (skip_spaces(c); k < 2; k++) {
            if (!number(c, &t) || !integer_value(&t, &read[k]) || read[k] <= 0) break;
            skip_spaces(c);
            if (!at(c, k == 0 ? ',' : ']')) break;
            c->at++;
            skip_spaces(c);
        }
    }
    if (k == 2) {
        size[0] = read[0];
        size[1] = read[1];
        return 1;
    }
    *c = start;
    skip_value(c);
    return 0;
}

/* RLE counts: a string (unescaped into `strings`) or a list of integers (into `runs`). */
static int rle_counts(cursor *c, columns *o) {
    const uint8_t *first, *last;
    if (at(c, '"')) {
        if (!string_span(c, &first, &last)) return MALFORMED;
        if (o->room[STRINGS] - o->used[STRINGS] < last - first) {
            o->failed = -1;
            return MALFORMED;
        }
        o->used[STRINGS] += unescaped(first, last, o->strings + o->used[STRINGS]);
        return RLE_STRING;
    }
    cursor start = *c;
    if (at(c, '[')) {
        int kind = RLE_RUNS, whole = 1;
        c->at++;
        skip_spaces(c);
        while (whole && !at(c, ']')) {
            token t;
            int64_t run;
            whole = number(c, &t) && t.integer;
            if (!whole) break;
            if (!integer_value(&t, &run) || run < 0 || run > (int64_t)UINT32_MAX) kind = RUNS_OUT_OF_RANGE;
            else if (o->used[RUNS] == o->room[RUNS]) {
                o->failed = -1;
                return MALFORMED;
            } else o->runs[o->used[RUNS]++] = (uint32_t)run;
            skip_spaces(c);
            if (at(c, ',')) {
                c->at++;
                skip_spaces(c);
            } else whole = at(c, ']');
        }
        if (whole) {
            c->at++;
            return kind;
        }
    }
    *c = start;
    return skip_value(c) ? BAD_RLE : MALFORMED;
}

/* An RLE object's members (the cursor after its '{', at its first key): the last `size` and the
 * last `counts` are the ones read, as json.loads keeps a key's last value. */
static int rle(cursor *c, columns *o, int64_t *size) {
    int sized = 0, counts = BAD_RLE;
    int64_t strings = o->used[STRINGS], runs = o->used[RUNS];
    for (;;) {
        const uint8_t *first, *last;
        if (!at(c, '"') || !string_span(c, &first, &last)) return MALFORMED;
        skip_spaces(c);
        if (!at(c, ':')) return MALFORMED;
        c->at++;
        skip_spaces(c);
        if (key_is(first, last, "size")) sized = rle_size(c, size);
        else if (key_is(first, last, "counts")) {
            o->used[STRINGS] = strings;
            o->used[RUNS] = runs;
            counts = rle_counts(c, o);
            if (counts == MALFORMED) return MALFORMED;
        } else if (!skip_value(c)) return MALFORMED;
        skip_spaces(c);
        if (at(c, '}')) {
            c->at++;
            break;
        }
        if (!at(c, ',')) return MALFORMED;
        c->at++;
        skip_spaces(c);
    }
    return sized ? counts : BAD_RLE;
}

/* One row's value, its columns written; what it holds. */
static int row(cursor *c, columns *o, int64_t *size, int64_t *parts) {
    skip_spaces(c);
    int list = at(c, '['), object = at(c, '{');
    if (!list && !object) return NO_MASK;
    c->at++;
    skip_spaces(c);
    if (at(c, list ? ']' : '}')) return NO_MASK;
    int kind = list ? polygons(c, o, parts) : rle(c, o, size);
    skip_spaces(c);
    if (kind == MALFORMED || (c->at != c->end && kind != BAD_POLYGONS && kind != BAD_RLE))
        return list ? BAD_POLYGONS : BAD_RLE;
    return kind;
}

/* Rows `text[starts[i]:ends[i]]`, i < n (bounds within the text: the caller checks them), on
 * images of `height[i]` x `width[i]` (NaN: unknown), each classified in `kinds[i]`. Polygons'
 * numbers go to `points`, each part's count of them to `part_lengths` and each row's count of
 * parts to `row_parts`; RLE's size to `sizes[2i]`, `sizes[2i + 1]`, its string unescaped to
 * `strings` (its length in `string_lengths`) or its runs to `runs` (`run_lengths`). Only rows of
 * POLYGONS, RLE_STRING and RLE_RUNS write any column. `room` holds each column's size (points,
 * parts, strings, runs), `used` gets what each row wrote. Returns 0, -1 where a column's room ran
 * out (nothing written past it), -2 where a long number found no memory. */
int64_t segmentation_scan(const uint8_t *text, const int64_t *starts, const int64_t *ends, int64_t n,
                          const double *height, const double *width, uint8_t *kinds, int64_t *sizes,
                          int64_t *row_parts, int64_t *string_lengths, int64_t *run_lengths,
                          double *points, int64_t *part_lengths, uint8_t *strings, uint32_t *runs,
                          const int64_t *room, int64_t *used) {
    columns o = {points, part_lengths, strings, runs, {room[0], room[1], room[2], room[3]}, {0, 0, 0, 0},
                 *localeconv()->decimal_point, 0};
    for (int64_t i = 0; i < n && o.failed == 0; i++) {
        int64_t before[4];
        memcpy(before, o.used, sizeof before);
        cursor c = {text + starts[i], text + ends[i]};
        sizes[2 * i] = sizes[2 * i + 1] = row_parts[i] = 0;
        int kind = row(&c, &o, sizes + 2 * i, row_parts + i);
        if (kind == POLYGONS && !(isfinite(height[i]) && isfinite(width[i]))) kind = NO_SIZE;
        if (kind != POLYGONS && kind != RLE_STRING && kind != RLE_RUNS) {
            memcpy(o.used, before, sizeof before);
            sizes[2 * i] = sizes[2 * i + 1] = row_parts[i] = 0;
        }
        string_lengths[i] = o.used[STRINGS] - before[STRINGS];
        run_lengths[i] = o.used[RUNS] - before[RUNS];
        kinds[i] = (uint8_t)kind;
    }
    memcpy(used, o.used, sizeof o.used);
    return o.failed;
}

/* The ',' and '[' bytes of `text[first:last]` counted into `counts[0]`, `counts[1]`: what the
 * columns of `segmentation_scan` need room for. Counted in blocks of at most 255 bytes into 8-bit
 * counters, which the compiler turns into wide vector compares. */
void segmentation_rooms(const uint8_t *text, int64_t first, int64_t last, int64_t *counts) {
    int64_t commas = 0, lists = 0;
    for (int64_t block = first; block < last; block += UINT8_MAX) {
        int64_t stop = last - block < UINT8_MAX ? last : block + UINT8_MAX;
        uint8_t block_commas = 0, block_lists = 0;
        for (int64_t i = block; i < stop; i++) {
            block_commas += text[i] == ',';
            block_lists += text[i] == '[';
        }
        commas += block_commas;
        lists += block_lists;
    }
    counts[0] = commas;
    counts[1] = lists;
}
