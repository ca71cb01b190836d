/* safetensors.h — reading and writing safetensors files, and the file helpers the model
 * directory shares (whole-file reads, JSON parsing with positions, crash-safe writes).
 *
 * A safetensors file is an 8-byte little-endian header length N, N bytes of JSON mapping
 * each tensor name to {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative to
 * the data area that follows the header; an optional "__metadata__" object of strings), then
 * the data. See https://github.com/huggingface/safetensors (format section).
 *
 * The reader maps the file and checks the whole header before anyone reads a byte of data:
 * every entry well-typed, every dtype known, every tensor inside the data area with exactly
 * numel * element-size bytes, no two tensors overlapping, no name twice. Data pointers point
 * into the mapping and may be unaligned. The writer writes F32 only (what parley trains in).
 */
#ifndef NLU_SAFETENSORS_H
#define NLU_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "parley/status.h"

struct cJSON;

enum { ST_MAX_DIMS = 8 };

typedef enum st_dtype {
    ST_F32, ST_F16, ST_BF16, /* the ones st_read_f32 widens */
    ST_F64, ST_I64, ST_I32, ST_I16, ST_I8, ST_U64, ST_U32, ST_U16, ST_U8, ST_BOOL,
    ST_F8_E5M2, ST_F8_E4M3,
} st_dtype;

typedef struct st_tensor {
    const char *name;       /* borrowed from the st_file */
    st_dtype dtype;
    int ndim;
    int64_t shape[ST_MAX_DIMS];
    size_t numel;
    const void *data;       /* (numel) elements of dtype, into the mapping, maybe unaligned */
    size_t nbytes;
} st_tensor;

typedef struct st_file {
    char *path;             /* owned copy, for error messages */
    int n_tensors;
    st_tensor *tensors;     /* (n_tensors) sorted by name */
    /* private */
    void *map;
    size_t map_size;
    struct cJSON *header;   /* owns the names */
} st_file;

/* Writes a shape as "[2, 3]" into buf (cap bytes) and returns buf. */
const char *st_shape_str(char *buf, size_t cap, const int64_t *shape, int ndim);

/* Maps and validates `path`. Errors name the path and, when one is at fault, the tensor:
 * PARLEY_ERR_NOT_FOUND / PARLEY_ERR_IO (open, map), PARLEY_ERR_FORMAT (structure),
 * PARLEY_ERR_UNSUPPORTED (an unknown dtype), PARLEY_ERR_NOMEM. On success *out is owned
 * by the caller (st_close). */
parley_status st_open(const char *path, st_file **out);
/* Unmaps the file; every pointer taken from it dies. NULL is a no-op. */
void st_close(st_file *f);

/* The tensor called `name`, or NULL. O(log n). */
const st_tensor *st_find(const st_file *f, const char *name);

/* Copies a tensor into dst as FP32, widening F16 and BF16 exactly. Other dtypes fail with
 * PARLEY_ERR_UNSUPPORTED naming `f`'s path and the tensor. */
parley_status st_read_f32(const st_file *f, const st_tensor *t, float *dst);

/* A file written under a temporary name in the final directory and renamed over `path` by
 * st_atomic_commit, so readers see the old file or the whole new one, never a part. */
typedef struct st_atomic {
    char *path;             /* owned copy of the final path */
    char *tmp_path;         /* owned; another writer may fill it by name (wp_vocab_save) */
    int fd;
} st_atomic;

/* Creates the temporary file. On failure nothing is left behind and `a` needs no abort. */
parley_status st_atomic_begin(st_atomic *a, const char *path);
/* Appends n bytes; an error (disk full...) names the final path. */
parley_status st_atomic_write(st_atomic *a, const void *buf, size_t n);
/* Flushes the temporary file to disk and renames it to the final path. Whether it succeeds
 * or not, `a` is finished afterwards (a failed commit removes the temporary file). */
parley_status st_atomic_commit(st_atomic *a);
/* Removes the temporary file and frees `a`. Safe on a zeroed or finished st_atomic. */
void st_atomic_abort(st_atomic *a);

typedef struct st_wtensor {
    const char *name;
    int ndim;
    int64_t shape[ST_MAX_DIMS];
    const float *data;      /* (numel) */
} st_wtensor;

/* Writes n F32 tensors, in the given order, with __metadata__ {"format": "pt"} and the
 * header padded with spaces so the data starts 8-byte aligned. */
parley_status st_write_f32(st_atomic *a, const st_wtensor *t, int n);

/* Creates dir unless it exists as a directory; the error names it. */
parley_status st_make_dir(const char *dir);
/* Reads a whole (small) file into a NUL-terminated buffer owned by the caller (pl_free). */
parley_status st_read_file(const char *path, size_t max_size, char **out, size_t *len);

/* Parses JSON text; `where` names it in errors, which give line:col for bad syntax
 * (PARLEY_ERR_FORMAT) and tell a failed allocation (PARLEY_ERR_NOMEM) from bad text.
 * Anything but whitespace after the value is an error. Free *out with cJSON_Delete. */
parley_status st_json_parse(const char *text, size_t len, const char *where, struct cJSON **out);

#endif
