/* safetensors.h — reading and writing safetensors files.
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
#include "sdk/base/files.h"

struct cJSON;

enum { SFT_MAX_DIMS = 8 };

typedef enum sft_dtype {
    SFT_F32,
    SFT_F16,
    SFT_BF16, /* the ones sft_read_f32 widens */
    SFT_F64,
    SFT_I64,
    SFT_I32,
    SFT_I16,
    SFT_I8,
    SFT_U64,
    SFT_U32,
    SFT_U16,
    SFT_U8,
    SFT_BOOL,
    SFT_F8_E5M2,
    SFT_F8_E4M3,
} sft_dtype;

typedef struct sft_tensor {
    const char *name; /* borrowed from the sft_file */
    sft_dtype dtype;
    int ndim;
    int64_t shape[SFT_MAX_DIMS];
    size_t numel;
    const void *data; /* (numel) elements of dtype, into the mapping, maybe unaligned */
    size_t nbytes;
} sft_tensor;

typedef struct sft_file {
    char *path; /* owned copy, for error messages */
    int n_tensors;
    sft_tensor *tensors; /* (n_tensors) sorted by name */
    /* private */
    void *map;
    size_t map_size;
    struct cJSON *header; /* owns the names */
} sft_file;

/* Writes a shape as "[2, 3]" into buf (cap bytes) and returns buf. */
const char *sft_shape_str(char *buf, size_t cap, const int64_t *shape, int ndim);

/* Maps and validates `path`. Errors name the path and, when one is at fault, the tensor:
 * PARLEY_ERR_NOT_FOUND / PARLEY_ERR_IO (open, map), PARLEY_ERR_FORMAT (structure),
 * PARLEY_ERR_UNSUPPORTED (an unknown dtype), PARLEY_ERR_NOMEM. On success *out is owned
 * by the caller (sft_close). */
parley_status sft_open(const char *path, sft_file **out);
/* Unmaps the file; every pointer taken from it dies. NULL is a no-op. */
void sft_close(sft_file *f);

/* The tensor called `name`, or NULL. O(log n). */
const sft_tensor *sft_find(const sft_file *f, const char *name);

/* Copies a tensor into dst as FP32, widening F16 and BF16 exactly. Other dtypes fail with
 * PARLEY_ERR_UNSUPPORTED naming `f`'s path and the tensor. */
parley_status sft_read_f32(const sft_file *f, const sft_tensor *t, float *dst);

typedef struct sft_wtensor {
    const char *name;
    int ndim;
    int64_t shape[SFT_MAX_DIMS];
    const float *data; /* (numel) */
} sft_wtensor;

/* Writes n F32 tensors, in the given order, with __metadata__ {"format": "pt"} and the
 * header padded with spaces so the data starts 8-byte aligned. */
parley_status sft_write_f32(pl_atomic *a, const sft_wtensor *t, int n);

#endif
