/* safetensors.c — the safetensors reader and F32 writer.
 *
 * The reader trusts nothing in the file: the header length, every offset and every shape is
 * checked against the file's real size before a data pointer is handed out, so a truncated
 * or hostile file fails with a message instead of a read past the mapping. It does not know
 * what a BERT is; nlu/model/model_io.c maps tensor names onto the model.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "nlu/model/safetensors.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "sdk/base/files.h"
#include "sdk/base/json.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors data is little-endian; parley reads and writes it as host memory"
#endif

/* The safetensors reference implementation refuses headers above 100 MB; so do we, so a
 * corrupt length cannot make us parse a gigabyte of data as JSON. */
enum { MAX_HEADER = 100000000 };

static const struct {
    const char *name;
    size_t size;
} dtypes[] = {
    [SFT_F32] = { "F32", 4 },   [SFT_F16] = { "F16", 2 },         [SFT_BF16] = { "BF16", 2 },
    [SFT_F64] = { "F64", 8 },   [SFT_I64] = { "I64", 8 },         [SFT_I32] = { "I32", 4 },
    [SFT_I16] = { "I16", 2 },   [SFT_I8] = { "I8", 1 },           [SFT_U64] = { "U64", 8 },
    [SFT_U32] = { "U32", 4 },   [SFT_U16] = { "U16", 2 },         [SFT_U8] = { "U8", 1 },
    [SFT_BOOL] = { "BOOL", 1 }, [SFT_F8_E5M2] = { "F8_E5M2", 1 }, [SFT_F8_E4M3] = { "F8_E4M3", 1 },
};

const char *sft_shape_str(char *buf, size_t cap, const int64_t *shape, int ndim)
{
    size_t n = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < ndim && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (n < cap)
        snprintf(buf + n, cap - n, "]");
    return buf;
}

/* An exact non-negative integer: JSON numbers are doubles, and past 2^53 they stop being
 * exact, so larger offsets cannot be trusted. */
static int json_u64(const cJSON *j, uint64_t *out)
{
    if (!cJSON_IsNumber(j))
        return 0;
    double v = j->valuedouble;
    if (!(v >= 0 && v <= 9007199254740992.0) || v != (double)(uint64_t)v)
        return 0;
    *out = (uint64_t)v;
    return 1;
}

/* Fills t (name, dtype, shape, numel, nbytes) and begin from one header entry. */
static parley_status parse_entry(const char *path, const cJSON *e, sft_tensor *t, uint64_t *begin)
{
    const char *name = e->string;
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(e, "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(e, "shape");
    const cJSON *offs = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
    uint64_t b, end;
    t->name = name;
    if (!cJSON_IsObject(e))
        return pl_fail(PARLEY_ERR_FORMAT,
                       "%s: tensor \"%s\": expected an object with dtype, shape and data_offsets",
                       path, name);
    if (!cJSON_IsString(dt))
        return pl_fail(PARLEY_ERR_FORMAT, "%s: tensor \"%s\": \"dtype\" is missing or not a string",
                       path, name);
    size_t d = 0;
    while (d < sizeof dtypes / sizeof dtypes[0] && strcmp(dtypes[d].name, dt->valuestring))
        d++;
    if (d == sizeof dtypes / sizeof dtypes[0])
        return pl_fail(PARLEY_ERR_UNSUPPORTED, "%s: tensor \"%s\": dtype \"%s\" is not supported",
                       path, name, dt->valuestring);
    t->dtype = (sft_dtype)d;

    if (!cJSON_IsArray(shape) || cJSON_GetArraySize(shape) > SFT_MAX_DIMS)
        return pl_fail(PARLEY_ERR_FORMAT,
                       "%s: tensor \"%s\": \"shape\" must be an array of at most %d integers", path,
                       name, SFT_MAX_DIMS);
    /* numel * size must fit the data area, which fits in a size_t: reject earlier overflow. */
    uint64_t numel = 1, limit = SIZE_MAX / 8;
    t->ndim = 0;
    for (const cJSON *s = shape->child; s; s = s->next) {
        uint64_t v;
        if (!json_u64(s, &v))
            return pl_fail(PARLEY_ERR_FORMAT,
                           "%s: tensor \"%s\": \"shape\" must hold non-negative integers", path,
                           name);
        if (v && numel > limit / v)
            return pl_fail(PARLEY_ERR_FORMAT, "%s: tensor \"%s\": shape is too large", path, name);
        numel *= v;
        t->shape[t->ndim++] = (int64_t)v;
    }
    t->numel = (size_t)numel;
    t->nbytes = t->numel * dtypes[d].size;

    if (!cJSON_IsArray(offs) || cJSON_GetArraySize(offs) != 2 || !json_u64(offs->child, &b) ||
        !json_u64(offs->child->next, &end) || b > end)
        return pl_fail(
                PARLEY_ERR_FORMAT,
                "%s: tensor \"%s\": \"data_offsets\" must be [begin, end] with 0 <= begin <= end",
                path, name);
    if (end - b != t->nbytes) {
        char sh[256];
        return pl_fail(PARLEY_ERR_FORMAT,
                       "%s: tensor \"%s\": data_offsets [%llu, %llu] hold %llu bytes, but shape %s "
                       "of %s needs %zu",
                       path, name, (unsigned long long)b, (unsigned long long)end,
                       (unsigned long long)(end - b),
                       sft_shape_str(sh, sizeof sh, t->shape, t->ndim), dtypes[d].name, t->nbytes);
    }
    *begin = b;
    return PARLEY_OK;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const sft_tensor *)a)->name, ((const sft_tensor *)b)->name);
}

static int by_offset(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const sft_tensor *)a)->data,
              y = (uintptr_t)((const sft_tensor *)b)->data;
    return (x > y) - (x < y);
}

/* Checks every entry of the parsed header against a data area of data_size bytes. */
static parley_status index_header(sft_file *f, const unsigned char *data, size_t data_size)
{
    parley_status st;
    const cJSON *root = f->header;
    int n = 0;
    if (!cJSON_IsObject(root))
        return pl_fail(PARLEY_ERR_FORMAT, "%s: the header is not a JSON object", f->path);
    for (const cJSON *e = root->child; e; e = e->next)
        n += strcmp(e->string, "__metadata__") != 0;
    f->tensors = pl_calloc((size_t)n, sizeof *f->tensors);
    if (!f->tensors)
        return pl_nomem("%s: %d tensor entries", f->path, n);
    for (const cJSON *e = root->child; e; e = e->next) {
        if (!strcmp(e->string, "__metadata__")) {
            int ok = cJSON_IsObject(e);
            for (const cJSON *m = e->child; ok && m; m = m->next)
                ok = cJSON_IsString(m);
            if (!ok)
                return pl_fail(PARLEY_ERR_FORMAT,
                               "%s: \"__metadata__\" must be an object of strings", f->path);
            continue;
        }
        sft_tensor *t = &f->tensors[f->n_tensors];
        uint64_t begin = 0;
        if ((st = parse_entry(f->path, e, t, &begin)) != PARLEY_OK)
            return st;
        if (begin + t->nbytes > data_size)
            return pl_fail(PARLEY_ERR_FORMAT,
                           "%s: tensor \"%s\": data_offsets [%llu, %llu] run past the end of the "
                           "data (%zu bytes): "
                           "the file is truncated or its header is wrong",
                           f->path, t->name, (unsigned long long)begin,
                           (unsigned long long)(begin + t->nbytes), data_size);
        t->data = data + begin;
        f->n_tensors++;
    }

    qsort(f->tensors, (size_t)n, sizeof *f->tensors, by_name);
    for (int i = 1; i < n; i++)
        if (!strcmp(f->tensors[i - 1].name, f->tensors[i].name))
            return pl_fail(PARLEY_ERR_FORMAT, "%s: tensor \"%s\" appears twice in the header",
                           f->path, f->tensors[i].name);
    /* In offset order, each non-empty tensor must start at or after the furthest end so far. */
    qsort(f->tensors, (size_t)n, sizeof *f->tensors, by_offset);
    const sft_tensor *furthest = NULL;
    for (int i = 0; i < n; i++) {
        const sft_tensor *t = &f->tensors[i];
        if (!t->nbytes)
            continue;
        if (furthest && (const unsigned char *)t->data <
                                (const unsigned char *)furthest->data + furthest->nbytes)
            return pl_fail(PARLEY_ERR_FORMAT,
                           "%s: tensors \"%s\" and \"%s\" overlap in the data area", f->path,
                           furthest->name, t->name);
        if (!furthest || (const unsigned char *)t->data + t->nbytes >
                                 (const unsigned char *)furthest->data + furthest->nbytes)
            furthest = t;
    }
    qsort(f->tensors, (size_t)n, sizeof *f->tensors, by_name);
    return PARLEY_OK;
}

parley_status sft_open(const char *path, sft_file **out)
{
    parley_status st;
    struct stat sb;
    sft_file *f = pl_calloc(1, sizeof *f);
    int fd = -1;
    *out = NULL;
    if (!f || !(f->path = pl_strdup(path))) {
        st = pl_nomem("%s", path);
        goto fail;
    }
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &sb) != 0) {
        st = pl_errno_fail(path, "open");
        goto fail;
    }
    if (!S_ISREG(sb.st_mode)) {
        st = pl_fail(PARLEY_ERR_IO, "%s: not a regular file", path);
        goto fail;
    }
    size_t size = (size_t)sb.st_size;
    if (size < 8) {
        st = pl_fail(PARLEY_ERR_FORMAT,
                     "%s: %zu bytes, too short for a safetensors file (truncated?)", path, size);
        goto fail;
    }
    /* MAP_POPULATE reads the file in one sweep instead of one page fault at a time. */
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (map == MAP_FAILED) {
        st = pl_errno_fail(path, "map");
        goto fail;
    }
    f->map = map;
    f->map_size = size;
    close(fd);
    fd = -1;

    const unsigned char *p = map;
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--)
        hlen = hlen << 8 | p[i];
    if (hlen < 2 || hlen > MAX_HEADER || hlen > size - 8) {
        st = pl_fail(PARLEY_ERR_FORMAT,
                     "%s: header length %llu is impossible for a file of %zu bytes (not "
                     "safetensors, or truncated)",
                     path, (unsigned long long)hlen, size);
        goto fail;
    }
    char where[4096];
    snprintf(where, sizeof where, "%s: header", path);
    if ((st = pl_json_parse((const char *)p + 8, (size_t)hlen, where, &f->header)) != PARLEY_OK)
        goto fail;
    if ((st = index_header(f, p + 8 + hlen, size - 8 - (size_t)hlen)) != PARLEY_OK)
        goto fail;
    *out = f;
    return PARLEY_OK;
fail:
    if (fd >= 0)
        close(fd);
    sft_close(f);
    return st;
}

void sft_close(sft_file *f)
{
    if (!f)
        return;
    if (f->map)
        munmap(f->map, f->map_size);
    cJSON_Delete(f->header);
    pl_free(f->tensors);
    pl_free(f->path);
    pl_free(f);
}

const sft_tensor *sft_find(const sft_file *f, const char *name)
{
    sft_tensor key = { .name = name };
    return bsearch(&key, f->tensors, (size_t)f->n_tensors, sizeof key, by_name);
}

/* IEEE half to single, exact for every input (subnormals, infinities, NaN payloads). */
static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, em = h & 0x7fff, bits;
    float f;
    if (em >= 0x7c00) {
        bits = sign | 0x7f800000 | (em & 0x3ff) << 13;
    } else if (em >= 0x0400) {
        bits = sign | ((em << 13) + ((127 - 15) << 23)); /* rebias the exponent */
    } else {
        f = (float)em * 0x1p-24f; /* subnormal or zero: em * 2^-24 */
        memcpy(&bits, &f, 4);
        bits |= sign;
    }
    memcpy(&f, &bits, 4);
    return f;
}

parley_status sft_read_f32(const sft_file *f, const sft_tensor *t, float *dst)
{
    const unsigned char *src = t->data;
    uint16_t h;
    uint32_t bits;
    switch (t->dtype) {
    case SFT_F32: memcpy(dst, src, t->nbytes); return PARLEY_OK;
    case SFT_F16:
        for (size_t i = 0; i < t->numel; i++) {
            memcpy(&h, src + 2 * i, 2);
            dst[i] = half_to_float(h);
        }
        return PARLEY_OK;
    case SFT_BF16:
        /* bfloat16 is the top half of a float32. */
        for (size_t i = 0; i < t->numel; i++) {
            memcpy(&h, src + 2 * i, 2);
            bits = (uint32_t)h << 16;
            memcpy(&dst[i], &bits, 4);
        }
        return PARLEY_OK;
    default:
        return pl_fail(PARLEY_ERR_UNSUPPORTED,
                       "%s: tensor \"%s\": dtype %s is not supported (F32, F16 or BF16 only)",
                       f->path, t->name, dtypes[t->dtype].name);
    }
}

static size_t wnumel(const sft_wtensor *t)
{
    size_t numel = 1;
    for (int d = 0; d < t->ndim; d++)
        numel *= (size_t)t->shape[d];
    return numel;
}

static int add_u64_array(cJSON *obj, const char *key, const uint64_t *v, int n)
{
    cJSON *arr = cJSON_AddArrayToObject(obj, key);
    if (!arr)
        return 0;
    for (int i = 0; i < n; i++) {
        cJSON *num = cJSON_CreateNumber((double)v[i]);
        if (!num || !cJSON_AddItemToArray(arr, num)) {
            cJSON_Delete(num);
            return 0;
        }
    }
    return 1;
}

/* The header JSON for tensors laid out back to back in the given order. */
static cJSON *build_header(const sft_wtensor *t, int n)
{
    cJSON *root = cJSON_CreateObject(), *meta;
    size_t offset = 0;
    if (!root || !(meta = cJSON_AddObjectToObject(root, "__metadata__")) ||
        !cJSON_AddStringToObject(meta, "format", "pt"))
        goto fail;
    for (int i = 0; i < n; i++) {
        uint64_t shape[SFT_MAX_DIMS], offs[2];
        for (int d = 0; d < t[i].ndim; d++)
            shape[d] = (uint64_t)t[i].shape[d];
        offs[0] = offset;
        offs[1] = offset += wnumel(&t[i]) * sizeof(float);
        cJSON *e = cJSON_AddObjectToObject(root, t[i].name);
        if (!e || !cJSON_AddStringToObject(e, "dtype", "F32") ||
            !add_u64_array(e, "shape", shape, t[i].ndim) ||
            !add_u64_array(e, "data_offsets", offs, 2))
            goto fail;
    }
    return root;
fail:
    cJSON_Delete(root);
    return NULL;
}

parley_status sft_write_f32(pl_atomic *a, const sft_wtensor *t, int n)
{
    parley_status st;
    char *json = NULL;
    unsigned char *head = NULL;
    cJSON *root = build_header(t, n);
    if (!root || !(json = cJSON_PrintUnformatted(root))) {
        st = pl_nomem("%s: the header", a->path);
        goto fail;
    }
    size_t len = strlen(json), padded = (len + 7) & ~(size_t)7;
    head = pl_malloc(8 + padded);
    if (!head) {
        st = pl_nomem("%s: the header", a->path);
        goto fail;
    }
    for (int i = 0; i < 8; i++)
        head[i] = (unsigned char)((uint64_t)padded >> (8 * i));
    memcpy(head + 8, json, len);
    memset(head + 8 + len, ' ', padded - len);
    if ((st = pl_atomic_write(a, head, 8 + padded)) != PARLEY_OK)
        goto fail;
    for (int i = 0; i < n; i++)
        if ((st = pl_atomic_write(a, t[i].data, wnumel(&t[i]) * sizeof(float))) != PARLEY_OK)
            goto fail;
    st = PARLEY_OK;
fail:
    pl_free(head);
    cJSON_free(json);
    cJSON_Delete(root);
    return st;
}
