/* JSON arrays of COCO-shaped objects (annotations, results) read straight into columns, and the
 * members of a top-level object found by their byte bounds.
 *
 * The scanner accepts only what every reader of the project reads the same way: RFC 8259 JSON
 * (UTF-8 checked, escapes checked, nesting at most MAX_DEPTH deep, no escaped UTF-16 surrogate)
 * plus the NaN / Infinity / -Infinity tokens Python's json module reads. Anything else makes it
 * refuse the block and say which record, so that the caller reads that block the slow way, which
 * says what is wrong. Every read is bounded by the text's end; every write by the room given. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64
/* Longest number token parsed with strtod (a longer one refuses its block). */
#define MAX_NUMBER 1024
/* Longest key compared with the known ones once its escapes are decoded. */
#define MAX_KEY 16

/* Which keys a record wrote (`written` flags). */
enum { HAS_SCORE = 1, HAS_CROWD = 2, HAS_SEGMENTATION = 4, HAS_BBOX = 8, HAS_IMAGE = 16, HAS_CATEGORY = 32 };
enum { KEY_OTHER, KEY_IMAGE, KEY_CATEGORY, KEY_BBOX, KEY_SCORE, KEY_CROWD, KEY_SEGMENTATION };

typedef const uint8_t *pos;

static pos spaces(pos p, pos end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}

static int hex(uint8_t c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* The four hex digits at p (p + 4 <= end checked by the caller), -1 if not hex. */
static int32_t hex4(pos p) {
    int32_t value = 0;
    for (int k = 0; k < 4; k++) {
        int digit = hex(p[k]);
        if (digit < 0) return -1;
        value = value * 16 + digit;
    }
    return value;
}

/* Past one UTF-8 sequence that starts with a byte >= 0x80, NULL if it is not well formed
 * (overlong, a surrogate, beyond U+10FFFF, cut short). */
static pos utf8(pos p, pos end) {
    uint8_t c = p[0];
    int more;
    uint8_t low = 0x80, high = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) more = 1;
    else if (c >= 0xE0 && c <= 0xEF) {
        more = 2;
        if (c == 0xE0) low = 0xA0;
        if (c == 0xED) high = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        more = 3;
        if (c == 0xF0) low = 0x90;
        if (c == 0xF4) high = 0x8F;
    } else return NULL;
    if (end - p <= more) return NULL;
    if (p[1] < low || p[1] > high) return NULL;
    for (int k = 2; k <= more; k++)
        if (p[k] < 0x80 || p[k] > 0xBF) return NULL;
    return p + more + 1;
}

/* Past a string whose opening quote is at p, NULL if it is not a valid one. Its characters
 * (ASCII, an escape decoded to one byte, 0xFF for any other) go to `key` while they fit in
 * `room`; `*length` is how many it has, whether they fit or not. */
static pos string(pos p, pos end, uint8_t *key, int64_t room, int64_t *length) {
    int64_t n = 0;
    p++;
    if (room == 0) /* skipped: its plain characters passed at once */
        while (p < end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') {
            p++;
            n++;
        }
    while (p < end) {
        uint8_t c = *p;
        uint8_t written = c;
        if (c == '"') {
            *length = n;
            return p + 1;
        }
        if (c < 0x20) return NULL;
        if (c == '\\') {
            if (end - p < 2) return NULL;
            uint8_t e = p[1];
            p += 2;
            if (e == 'u') {
                if (end - p < 4) return NULL;
                int32_t unit = hex4(p);
                /* A surrogate, even in a pair: the plain parser's reading of NaN refuses texts with one. */
                if (unit < 0 || (unit >= 0xD800 && unit <= 0xDFFF)) return NULL;
                p += 4;
                written = unit < 0x80 ? (uint8_t)unit : 0xFF;
            } else {
                static const char escapes[] = "\"\\/bfnrt";
                static const char meant[] = "\"\\/\b\f\n\r\t";
                const char *at = memchr(escapes, e, sizeof escapes - 1);
                if (at == NULL) return NULL;
                written = (uint8_t)meant[at - escapes];
            }
        } else if (c >= 0x80) {
            p = utf8(p, end);
            if (p == NULL) return NULL;
            written = 0xFF;
        } else p++;
        if (n < room) key[n] = written;
        n++;
    }
    return NULL;
}

static pos literal(pos p, pos end, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(end - p) < n || memcmp(p, word, n) != 0) return NULL;
    return p + n;
}

/* The extent of a JSON number token at p: `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`. Returns
 * its end (NULL if none); `*integer` whether it has no fraction or exponent. */
static pos number_token(pos p, pos end, int *integer) {
    if (p < end && *p == '-') p++;
    if (p == end || *p < '0' || *p > '9') return NULL;
    if (*p == '0') p++;
    else
        while (p < end && *p >= '0' && *p <= '9') p++;
    *integer = 1;
    if (p < end && *p == '.') {
        p++;
        if (p == end || *p < '0' || *p > '9') return NULL;
        while (p < end && *p >= '0' && *p <= '9') p++;
        *integer = 0;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (p == end || *p < '0' || *p > '9') return NULL;
        while (p < end && *p >= '0' && *p <= '9') p++;
        *integer = 0;
    }
    return p;
}

/* Powers of ten a double holds exactly. */
static const double EXACT_TENS[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
/* Digits past which a token's value is left to strtod: 15 make an integer a double holds exactly. */
#define EXACT_DIGITS 15
/* An exponent's digits are not added up beyond this (the token then goes to strtod). */
#define EXPONENT_CAP 100000

/* A number token's digits, read in the same pass as its grammar is checked. */
typedef struct {
    uint64_t digits;  /* its significant digits, while there are at most EXACT_DIGITS */
    int significant;  /* how many (leading zeros not counted) */
    int exponent;     /* the power of ten the digits are scaled by */
} decimal;

static pos digits(pos p, pos end, decimal *d, int fraction) {
    for (; p < end && *p >= '0' && *p <= '9'; p++) {
        if (d->significant || *p != '0') d->significant++;
        if (d->significant <= EXACT_DIGITS) { /* beyond, the token goes to strtod */
            d->digits = d->digits * 10 + (uint64_t)(*p - '0');
            d->exponent -= fraction;
        }
    }
    return p;
}

/* strtod on the token p..after, copied so that it ends there; 0 when it does not read it whole. */
static int parsed(pos p, pos after, double *value) {
    char token[MAX_NUMBER + 1];
    int64_t n = after - p;
    if (n > MAX_NUMBER) return 0;
    memcpy(token, p, (size_t)n);
    token[n] = 0;
    char *consumed;
    *value = strtod(token, &consumed);
    return consumed == token + n;
}

/* A number at p (a JSON number, NaN, Infinity or -Infinity) as Python's json.loads reads it and
 * float() converts it: an integer token as an integer (so `-0` is 0.0). Returns its end, NULL
 * for anything else (or an integer beyond a double's range, which float() refuses). A token of at
 * most EXACT_DIGITS significant digits and a power of ten within 22 either way is one exact
 * integer times or over one exact power of ten: one IEEE operation rounds it correctly
 * (Clinger's fast path), as strtod would; any other goes to strtod. */
static pos number(pos p, pos end, double *value) {
    pos start = p;
    if (p == end) return NULL;
    if (*p == 'N') {
        *value = NAN;
        return literal(p, end, "NaN");
    }
    int negative = *p == '-';
    p += negative;
    if (p < end && *p == 'I') {
        *value = negative ? -INFINITY : INFINITY;
        return literal(p, end, "Infinity");
    }
    decimal d = {0, 0, 0};
    int integer = 1;
    if (p == end || *p < '0' || *p > '9') return NULL;
    if (*p == '0') p++;
    else p = digits(p, end, &d, 0);
    if (p < end && *p == '.') {
        pos first = ++p;
        p = digits(p, end, &d, 1);
        if (p == first) return NULL;
        integer = 0;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        int sign = 1, written = 0;
        if (p < end && (*p == '+' || *p == '-')) sign = *p++ == '-' ? -1 : 1;
        pos first = p;
        for (; p < end && *p >= '0' && *p <= '9'; p++)
            if (written < EXPONENT_CAP) written = written * 10 + (*p - '0');
        if (p == first) return NULL;
        d.exponent += sign * written;
        integer = 0;
    }
    if (d.significant <= EXACT_DIGITS && d.exponent >= -22 && d.exponent <= 22) {
        double magnitude = (double)d.digits;
        magnitude = d.exponent < 0 ? magnitude / EXACT_TENS[-d.exponent] : magnitude * EXACT_TENS[d.exponent];
        *value = negative && !(integer && d.digits == 0) ? -magnitude : magnitude;
        return p;
    }
    if (!parsed(start, p, value) || (integer && isinf(*value))) return NULL;
    if (integer && *value == 0) *value = 0.0;
    return p;
}

/* An integer token within int64 at p; NULL for anything else (a fraction, an exponent, beyond). */
static pos int64_at(pos p, pos end, int64_t *value) {
    int integer;
    pos after = number_token(p, end, &integer);
    if (after == NULL || !integer) return NULL;
    int negative = *p == '-';
    uint64_t magnitude = 0;
    for (pos d = p + negative; d < after; d++) {
        uint64_t digit = (uint64_t)(*d - '0');
        if (magnitude > (UINT64_MAX - digit) / 10) return NULL;
        magnitude = magnitude * 10 + digit;
    }
    if (magnitude > (uint64_t)INT64_MAX + (uint64_t)negative) return NULL;
    *value = negative ? (int64_t)(0 - magnitude) : (int64_t)magnitude;
    return after;
}

/* Past any JSON value at p (nested at most MAX_DEPTH - depth deeper), NULL if there is none. */
static pos value_end(pos p, pos end, int depth) {
    if (p == end) return NULL;
    int64_t ignored;
    int integer;
    pos after;
    switch (*p) {
    case '"':
        return string(p, end, NULL, 0, &ignored);
    case 't':
        return literal(p, end, "true");
    case 'f':
        return literal(p, end, "false");
    case 'n':
        return literal(p, end, "null");
    case '[':
    case '{': {
        if (depth >= MAX_DEPTH) return NULL;
        int object = *p == '{';
        uint8_t close = object ? '}' : ']';
        p = spaces(p + 1, end);
        if (p < end && *p == close) return p + 1;
        for (;;) {
            if (object) {
                if (p == end || *p != '"') return NULL;
                p = string(p, end, NULL, 0, &ignored);
                if (p == NULL) return NULL;
                p = spaces(p, end);
                if (p == end || *p != ':') return NULL;
                p = spaces(p + 1, end);
            }
            p = value_end(p, end, depth + 1);
            if (p == NULL) return NULL;
            p = spaces(p, end);
            if (p == end) return NULL;
            if (*p == close) return p + 1;
            if (*p != ',') return NULL;
            p = spaces(p + 1, end);
        }
    }
    case 'N':
        return literal(p, end, "NaN");
    case 'I':
        return literal(p, end, "Infinity");
    default: /* a number, whose value is not needed */
        if ((after = literal(p, end, "-Infinity")) != NULL) return after;
        return number_token(p, end, &integer);
    }
}

static int key_of(const uint8_t *key, int64_t n) {
    switch (n) {
    case 8: return memcmp(key, "image_id", 8) == 0 ? KEY_IMAGE : KEY_OTHER;
    case 11: return memcmp(key, "category_id", 11) == 0 ? KEY_CATEGORY : KEY_OTHER;
    case 4: return memcmp(key, "bbox", 4) == 0 ? KEY_BBOX : KEY_OTHER;
    case 5: return memcmp(key, "score", 5) == 0 ? KEY_SCORE : KEY_OTHER;
    case 7: return memcmp(key, "iscrowd", 7) == 0 ? KEY_CROWD : KEY_OTHER;
    case 12: return memcmp(key, "segmentation", 12) == 0 ? KEY_SEGMENTATION : KEY_OTHER;
    default: return KEY_OTHER;
    }
}

/* `[x, y, w, h]` at p into box[0..3]. */
static pos four_numbers(pos p, pos end, double *box) {
    if (p == end || *p != '[') return NULL;
    for (int k = 0; k < 4; k++) {
        p = spaces(p + 1, end);
        p = number(p, end, &box[k]);
        if (p == NULL) return NULL;
        p = spaces(p, end);
        if (p == end || *p != (k < 3 ? ',' : ']')) return NULL;
    }
    return p + 1;
}

/* The columns of one record (an object at p), `written` its flags; past it, NULL if refused. */
static pos record(pos text, pos p, pos end, int64_t *image, int64_t *category, double *box, double *score,
                  int64_t *crowd, int64_t *segmentation, uint8_t *written) {
    uint8_t key[MAX_KEY];
    int64_t length;
    *written = 0;
    *score = NAN;
    *crowd = 0;
    box[0] = box[1] = box[2] = box[3] = NAN;
    segmentation[0] = segmentation[1] = 0;
    if (p == end || *p != '{') return NULL;
    p = spaces(p + 1, end);
    if (p < end && *p == '}') return NULL; /* no ids */
    for (;;) {
        if (p == end || *p != '"') return NULL;
        p = string(p, end, key, MAX_KEY, &length);
        if (p == NULL) return NULL;
        p = spaces(p, end);
        if (p == end || *p != ':') return NULL;
        p = spaces(p + 1, end);
        pos start = p;
        switch (length <= MAX_KEY ? key_of(key, length) : KEY_OTHER) {
        case KEY_IMAGE:
            p = int64_at(p, end, image);
            *written |= HAS_IMAGE;
            break;
        case KEY_CATEGORY:
            p = int64_at(p, end, category);
            *written |= HAS_CATEGORY;
            break;
        case KEY_BBOX:
            p = four_numbers(p, end, box);
            *written |= HAS_BBOX;
            break;
        case KEY_SCORE:
            p = number(p, end, score);
            *written |= HAS_SCORE;
            break;
        case KEY_CROWD:
            p = int64_at(p, end, crowd);
            *written |= HAS_CROWD;
            break;
        case KEY_SEGMENTATION:
            p = value_end(p, end, 2);
            segmentation[0] = start - text;
            segmentation[1] = p == NULL ? 0 : p - text;
            *written |= HAS_SEGMENTATION;
            break;
        default:
            p = value_end(p, end, 2);
        }
        if (p == NULL) return NULL;
        p = spaces(p, end);
        if (p == end) return NULL;
        if (*p == '}') break;
        if (*p != ',') return NULL;
        p = spaces(p + 1, end);
    }
    if ((*written & (HAS_IMAGE | HAS_CATEGORY)) != (HAS_IMAGE | HAS_CATEGORY)) return NULL;
    return p + 1;
}

/* `text[0:n]`, a JSON array of objects, read into columns with room for `room` records: record
 * i's image_id and category_id (integers within int64), bbox (4 numbers, NaN if none), score (NaN
 * if none), iscrowd (an integer, 0 if none), the bounds of its segmentation's value (0, 0 if
 * none) and which of them it wrote (`written`). Returns how many records, or -1 - i when record i
 * is refused (not an object with integer ids, a value of another type, not JSON, or no room). */
int64_t json_records(const uint8_t *text, int64_t n, int64_t room, int64_t *image, int64_t *category,
                     double *box, double *score, int64_t *crowd, int64_t *segmentation, uint8_t *written) {
    if (n <= 0) return -1; /* no text */
    pos end = text + n, p = spaces(text, end);
    int64_t count = 0;
    if (p == end || *p != '[') return -1;
    p = spaces(p + 1, end);
    if (p < end && *p == ']') return spaces(p + 1, end) == end ? 0 : -1;
    for (;;) {
        if (count == room) return -1 - count;
        p = record(text, p, end, &image[count], &category[count], &box[4 * count], &score[count],
                   &crowd[count], &segmentation[2 * count], &written[count]);
        if (p == NULL) return -1 - count;
        count++;
        p = spaces(p, end);
        if (p == end) return -1 - count;
        if (*p == ']') return spaces(p + 1, end) == end ? count : -1 - count;
        if (*p != ',') return -1 - count;
        p = spaces(p + 1, end);
    }
}

/* The members of the object `text[0:n]` (the whole text, whitespace around it), with room for
 * `room`: member i's key (quotes included) at bounds[4i], bounds[4i+1], its value at bounds[4i+2],
 * bounds[4i+3]. Returns how many, -1 when the text is not one object or has more members. */
int64_t json_members(const uint8_t *text, int64_t n, int64_t room, int64_t *bounds) {
    if (n <= 0) return -1;
    pos end = text + n, p = spaces(text, end);
    int64_t count = 0, ignored;
    if (p == end || *p != '{') return -1;
    p = spaces(p + 1, end);
    if (p < end && *p == '}') return spaces(p + 1, end) == end ? 0 : -1;
    for (;;) {
        if (count == room || p == end || *p != '"') return -1;
        bounds[4 * count] = p - text;
        p = string(p, end, NULL, 0, &ignored);
        if (p == NULL) return -1;
        bounds[4 * count + 1] = p - text;
        p = spaces(p, end);
        if (p == end || *p != ':') return -1;
        p = spaces(p + 1, end);
        bounds[4 * count + 2] = p - text;
        p = value_end(p, end, 1);
        if (p == NULL) return -1;
        bounds[4 * count + 3] = p - text;
        count++;
        p = spaces(p, end);
        if (p == end) return -1;
        if (*p == '}') return spaces(p + 1, end) == end ? count : -1;
        if (*p != ',') return -1;
        p = spaces(p + 1, end);
    }
}

/* The spans text[bounds[2i]:bounds[2i+1]], i < n, one after the other into `joined` (room for
 * `room` bytes), a span that is not a value within the text (a row without one: (-1, -1))
 * written as `null`; where each went into placed[2i], placed[2i+1]. Returns the bytes written, -1
 * when they do not fit. */
int64_t json_join_spans(const uint8_t *text, int64_t n_text, const int64_t *bounds, int64_t n, uint8_t *joined,
                        int64_t room, int64_t *placed) {
    int64_t written = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t start = bounds[2 * i], end = bounds[2 * i + 1];
        const uint8_t *from = (const uint8_t *)"null";
        int64_t length = 4;
        if (start >= 0 && start < end && end <= n_text) {
            from = text + start;
            length = end - start;
        }
        if (length > room - written) return -1;
        memcpy(joined + written, from, (size_t)length);
        placed[2 * i] = written;
        written += length;
        placed[2 * i + 1] = written;
    }
    return written;
}
