/* sparse_lookup.c — a lookup table's values held in a few blocks whatever its size
 * (sf_lookup in sparse_impl.h), so a table of a million values loads in proportion to its
 * bytes rather than costing an allocation per value and per typing-slip variant.
 *
 * The normalized values lie end to end in one buffer (each NUL-terminated, in the order
 * added, which is the order sparse.json keeps); two open-addressing indexes of 32-bit
 * entries (a few bits of the hash as a tag, then the payload) find them: `values` holds
 * value numbers, `slips` holds, for each value of
 * PL_SLIP_MIN to PL_SLIP_MAX code points, one entry per code point (not a space) that may
 * be left out: the value's number and that code point's byte, never a copy of the variant.
 * A query is compared with the value or the variant in place. What matches is the matcher's
 * business (sparse_match.c); this file only answers "is this string one of them".
 */
#include <string.h>

#include "nlu/sparse/sparse_impl.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "sdk/base/names.h"
#include "sdk/base/slip.h"

/* An entry: a tag (the top bits of its string's hash, so most places that hold another
 * string are passed without reading it), then its payload: in `values` the value number + 1
 * (VALUE_BITS), in `slips` that, then the byte where the left-out code point begins
 * (POS_BITS: a value of at most PL_SLIP_MAX code points of valid UTF-8 has at most
 * 4 * PL_SLIP_MAX bytes). */
enum { VALUE_BITS = 20, POS_BITS = 8, MAX_SLIP_BYTES = 4 * PL_SLIP_MAX };

_Static_assert(SF_MAX_LOOKUP_VALUES < (1 << VALUE_BITS) - 1, "value numbers fit an entry");
_Static_assert(MAX_SLIP_BYTES <= 1 << POS_BITS, "a slip's byte fits an entry");

/* The payload's bits of an entry of `values` (slip 0) or `slips` (1); the tag has the rest. */
static unsigned payload_bits(int slip)
{
    return slip ? VALUE_BITS + POS_BITS : VALUE_BITS;
}

/* Value i of l and its length. */
static const char *value(const sf_lookup *l, uint32_t i, size_t *len)
{
    size_t end = i + 1 < (uint32_t)l->n ? l->at[i + 1] : l->len;
    *len = end - l->at[i] - 1;
    return l->bytes + l->at[i];
}

/* The bytes of the code point of s that begins at byte p (its lead and continuations). */
static size_t code_point_len(const char *s, size_t len, size_t p)
{
    size_t e = p + 1;
    while (e < len && ((unsigned char)s[e] & 0xC0) == 0x80)
        e++;
    return e - p;
}

/* An entry's string, in two pieces: a value is [a, a + na); a variant is the value with
 * bytes [na, na + gap) left out: [a, a + na) then [b, b + nb). */
typedef struct piece {
    const char *a, *b;
    size_t na, nb;
} piece;

static piece entry_string(const sf_lookup *l, int slip, uint32_t e)
{
    size_t len;
    e &= (1u << payload_bits(slip)) - 1;
    if (!slip) {
        const char *v = value(l, e - 1, &len);
        return (piece){ v, v, len, 0 };
    }
    const char *v = value(l, (e >> POS_BITS) - 1, &len);
    size_t p = e & ((1u << POS_BITS) - 1), cp = code_point_len(v, len, p);
    return (piece){ v, v + p + cp, p, len - p - cp };
}

/* FNV-1a hash h mixed (MurmurHash3's finalizer): FNV's low bits follow the bytes' low bits,
 * and unmixed, similar values would crowd together and probes grow long. Its low bits give
 * the place, its top bits the tag. */
static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

static uint64_t piece_hash(piece s)
{
    return mix(pl_fnv(pl_fnv(PL_FNV_SEED, s.a, s.na), s.b, s.nb));
}

/* The tag of mixed hash h, in place in an entry. */
static uint32_t tag(uint64_t h, int slip)
{
    return (uint32_t)(h >> (64 - (32 - payload_bits(slip)))) << payload_bits(slip);
}

static int piece_is(piece s, const char *q, size_t len)
{
    return s.na + s.nb == len && !memcmp(s.a, q, s.na) && !memcmp(s.b, q + s.na, s.nb);
}

/* The entry of index ix whose string is q[0..len), or 0; *at its place or the empty place
 * where it would go, *tagged the tag an entry for q carries. */
static uint32_t probe(const sf_lookup *l, int slip, const sf_index *ix, const char *q, size_t len,
                      size_t *at, uint32_t *tagged)
{
    const uint64_t h = mix(pl_fnv(PL_FNV_SEED, q, len));
    const uint32_t t = tag(h, slip), tag_mask = ~((1u << payload_bits(slip)) - 1);
    size_t i = (size_t)h & ix->mask;
    for (; ix->slot[i]; i = (i + 1) & ix->mask)
        if ((ix->slot[i] & tag_mask) == t && piece_is(entry_string(l, slip, ix->slot[i]), q, len))
            break;
    *at = i;
    *tagged = t;
    return ix->slot[i];
}

/* Makes room in ix for `more` entries: at most three quarters of its places are used. */
static parley_status make_room(const sf_lookup *l, int slip, sf_index *ix, size_t more)
{
    if (ix->slot && (ix->n + more) * 4 <= (ix->mask + 1) * 3)
        return PARLEY_OK;
    size_t places = ix->slot ? 2 * (ix->mask + 1) : 1024;
    while ((ix->n + more) * 4 > places * 3)
        places *= 2;
    uint32_t *slot = pl_calloc(places, sizeof *slot);
    if (!slot)
        return pl_nomem("sparse features: lookup table \"%s\"", l->name);
    for (size_t i = 0; ix->slot && i <= ix->mask; i++) {
        if (!ix->slot[i])
            continue;
        size_t j = (size_t)piece_hash(entry_string(l, slip, ix->slot[i])) & (places - 1);
        while (slot[j])
            j = (j + 1) & (places - 1);
        slot[j] = ix->slot[i];
    }
    pl_free(ix->slot);
    ix->slot = slot;
    ix->mask = places - 1;
    return PARLEY_OK;
}

/* Adds the variants of value i (s[0..len)) with one code point, not a space, left out;
 * one that is there already (a twin letter, or another value's) is not added again. */
static parley_status add_slips(sf_lookup *l, uint32_t i, const char *s, size_t len)
{
    char buf[MAX_SLIP_BYTES];
    for (size_t p = 0; p < len; p += code_point_len(s, len, p)) {
        if (s[p] == ' ')
            continue;
        size_t cp = code_point_len(s, len, p), at;
        uint32_t t;
        memcpy(buf, s, p);
        memcpy(buf + p, s + p + cp, len - p - cp);
        parley_status st = make_room(l, 1, &l->slips, 1);
        if (st != PARLEY_OK)
            return st;
        if (!probe(l, 1, &l->slips, buf, len - cp, &at, &t)) {
            l->slips.slot[at] = t | (i + 1) << POS_BITS | (uint32_t)p;
            l->slips.n++;
        }
    }
    return PARLEY_OK;
}

parley_status sf_lookup_add(sf_lookup *l, const char *s, size_t len, int words, int slips)
{
    size_t at;
    uint32_t t;
    parley_status st = make_room(l, 0, &l->values, 1);
    if (st != PARLEY_OK)
        return st;
    if (probe(l, 0, &l->values, s, len, &at, &t))
        return PARLEY_OK; /* a repeat: its slips are there already */
    if (l->n == l->cap_at) {
        int cap = l->cap_at ? 2 * l->cap_at : 256;
        size_t *p = pl_realloc(l->at, (size_t)cap * sizeof *p);
        if (!p)
            return pl_nomem("sparse features: lookup table \"%s\"", l->name);
        l->at = p;
        l->cap_at = cap;
    }
    if (l->len + len + 1 > l->cap) {
        size_t cap = l->cap ? l->cap : 4096;
        while (cap < l->len + len + 1)
            cap *= 2;
        char *b = pl_realloc(l->bytes, cap);
        if (!b)
            return pl_nomem("sparse features: lookup table \"%s\"", l->name);
        l->bytes = b;
        l->cap = cap;
    }
    uint32_t i = (uint32_t)l->n++;
    l->at[i] = l->len;
    memcpy(l->bytes + l->len, s, len);
    l->bytes[l->len + len] = '\0';
    l->len += len + 1;
    l->values.slot[at] = t | (i + 1);
    l->values.n++;
    if (words > l->max_words)
        l->max_words = words;
    const int n = pl_code_points(s, len);
    if (slips && n >= PL_SLIP_MIN && n <= PL_SLIP_MAX && len <= MAX_SLIP_BYTES)
        return add_slips(l, i, s, len);
    return PARLEY_OK;
}

parley_status sf_lookup_reserve(sf_lookup *l, size_t values, size_t bytes, int slips)
{
    parley_status st = make_room(l, 0, &l->values, values);
    return st == PARLEY_OK && slips ? make_room(l, 1, &l->slips, bytes) : st;
}

int sf_lookup_has(const sf_lookup *l, const char *s, size_t len)
{
    size_t at;
    uint32_t t;
    return l->values.slot && probe(l, 0, &l->values, s, len, &at, &t) != 0;
}

int sf_lookup_has_slip(const sf_lookup *l, const char *s, size_t len)
{
    size_t at;
    uint32_t t;
    return l->slips.slot && probe(l, 1, &l->slips, s, len, &at, &t) != 0;
}

const char *sf_lookup_value(const sf_lookup *l, int i)
{
    return l->bytes + l->at[i];
}

void sf_lookup_free(sf_lookup *l)
{
    pl_free(l->name);
    pl_free(l->bytes);
    pl_free(l->at);
    pl_free(l->values.slot);
    pl_free(l->slips.slot);
    memset(l, 0, sizeof *l);
}
