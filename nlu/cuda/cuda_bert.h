/* cuda_bert.h — the BERT joint model on an NVIDIA GPU, seen from C.
 *
 * nlu.c calls this small interface; everything that includes CUDA headers lives in
 * the .cu files of nlu/cuda. An instance uploads the weights of a loaded model once (in the chosen
 * storage precision; FP32 accumulation everywhere) and runs batches on its own stream: one
 * host-to-device copy of the token ids, the whole forward pass captured as a CUDA graph per
 * (batch, padded length) shape, one device-to-host copy of the logits.
 *
 * Threading: an instance is not thread-safe (one stream, one set of buffers); callers
 * serialize their calls to it (nlu.c holds a mutex). Different instances are independent.
 * In a build without CUDA every function exists and answers PARLEY_ERR_NOT_BUILT (or 0).
 */
#ifndef NLU_CUDA_BERT_H
#define NLU_CUDA_BERT_H

#ifdef __cplusplus
extern "C" {
#endif

#include "nlu/bert.h"

typedef enum cuda_precision {
    CUDA_PREC_FP16, /* weights and activations in FP16, FP32 accumulation (the default) */
    CUDA_PREC_BF16, /* the same in BF16 */
    CUDA_PREC_FP32, /* FP32 throughout, no TF32: for checking against the CPU path */
} cuda_precision;

/* Parses "fp16", "bf16" or "fp32" (NULL = fp16) into *out; an error names the value. */
parley_status cuda_precision_parse(const char *s, cuda_precision *out);
const char *cuda_precision_name(cuda_precision p);

/* Parses a device name into *gpu: CUDA_DEVICE_CPU for "cpu", the index for "cuda" and
 * "cuda:N", CUDA_DEVICE_AUTO for "auto", NULL or "" (the GPU when one works, else the CPU);
 * anything else is PARLEY_ERR_INVALID_ARG naming it. */
enum { CUDA_DEVICE_CPU = -1, CUDA_DEVICE_AUTO = -2 };
parley_status cuda_device_parse(const char *device, int *gpu);

/* The number of usable CUDA devices; 0 without a driver, a device or CUDA in the build. */
int cuda_device_count(void);

typedef struct cuda_bert cuda_bert;

/* Uploads m's weights to device `device` (0-based). m must outlive nothing: the instance
 * keeps its own copies of what it needs. On success *out belongs to the caller. */
parley_status cuda_bert_open(const bert_model *m, int device, cuda_precision prec, cuda_bert **out);

/* The same contract as bert_forward (packed batch in, intent_logits (B, NI) and slot_logits
 * (N, NS) out, FP32), run on the GPU. */
parley_status cuda_bert_forward(cuda_bert *g, const bert_batch *b, float *intent_logits,
                                float *slot_logits);

/* How attention runs: one flash-style tensor-core kernel that keeps the scores on chip
 * (attention_flash.cu; FP16 and BF16 storage, heads of 16, 32, 64 or 128, sm_80 and later),
 * two batched tensor-core GEMMs around a masked softmax (attention_gemm.cu), or the fused
 * CUDA-core kernel (attention.cu), kept as the simple reference path. Auto (the default) and
 * flash take the flash kernel where it runs and the GEMMs elsewhere (FP32 storage among
 * them). For tests and benchmarks; call it between forward passes of one thread. */
typedef enum cuda_attention_mode {
    CUDA_ATT_AUTO,
    CUDA_ATT_FUSED,
    CUDA_ATT_GEMM,
    CUDA_ATT_FLASH
} cuda_attention_mode;
void cuda_bert_set_attention(cuda_bert *g, cuda_attention_mode mode);

/* Whether the attention-out and FFN-out products of small batches (FP16, BF16) are cut into
 * slices of K whose FP32 products the LayerNorm kernel sums (on, the default), or left to
 * cuBLAS whole. For tests and benchmarks; call it between forward passes of one thread. */
void cuda_bert_set_split_k(cuda_bert *g, int on);

/* A line naming the device and precision ("NVIDIA H100 80GB HBM3 (cuda:0), fp16"). */
const char *cuda_bert_describe(const cuda_bert *g);

/* NULL is a no-op. */
void cuda_bert_close(cuda_bert *g);

#ifdef __cplusplus
}
#endif

#endif
