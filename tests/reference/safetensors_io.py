"""safetensors_io.py — a small numpy reader and writer of the safetensors format.

The format (https://github.com/huggingface/safetensors): an unsigned 64-bit little-endian
header length N, N bytes of JSON mapping each tensor name to {"dtype", "shape",
"data_offsets": [begin, end]} (offsets into the data that follows the header) plus an
optional "__metadata__" object of strings, then the data, little-endian.

This is the independent reference the tests compare parley's C reader and writer against,
written from the format description alone; it is not a copy of the safetensors package
(which these machines do not have). Float tensors are F32, F16 or BF16 on disk and float32
in memory; integer tensors (the int64 position_ids some checkpoints carry) keep their type.
"""
import json
import struct

import numpy as np

_NUMPY = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64,
          "I32": np.int32, "I16": np.int16, "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_}
_FROM_NUMPY = {np.dtype(np.int64): "I64", np.dtype(np.int32): "I32", np.dtype(np.int16): "I16",
               np.dtype(np.int8): "I8", np.dtype(np.uint8): "U8", np.dtype(np.bool_): "BOOL"}

# The joint heads (and the sparse features' maps) never carry the encoder's "bert." prefix.
HEADS = ("intent_classifier.", "slot_classifier.", "sparse_intent_classifier.", "sparse_slot_classifier.")


def bf16_to_f32(bits):
    """uint16 array of bfloat16 bit patterns -> float32 (exact: bf16 is float32's top half)."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16(x):
    """float32 array -> uint16 bfloat16 bit patterns, rounding to nearest even."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    rounded[nan] = ((bits[nan] >> 16) | 0x40).astype(np.uint16)  # keep NaNs NaN (quiet bit)
    return rounded


def read_header(path):
    """(header dict, offset of the data area) of a safetensors file."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n).decode("utf-8"))
    return header, 8 + n


def load(path):
    """All tensors of a safetensors file: name -> np.ndarray (float32 for float dtypes)."""
    header, start = read_header(path)
    with open(path, "rb") as f:
        blob = f.read()
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        begin, end = e["data_offsets"]
        raw = blob[start + begin:start + end]
        shape = tuple(e["shape"])
        if e["dtype"] == "BF16":
            arr = bf16_to_f32(np.frombuffer(raw, dtype="<u2"))
        else:
            arr = np.frombuffer(raw, dtype=np.dtype(_NUMPY[e["dtype"]]).newbyteorder("<"))
            if arr.dtype.kind == "f":
                arr = arr.astype(np.float32)
        out[name] = arr.reshape(shape).copy()
    return out


def _encode(arr, dtype):
    """(dtype name, little-endian bytes) of one tensor."""
    arr = np.asarray(arr)
    if arr.dtype.kind != "f":
        return _FROM_NUMPY[arr.dtype], np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<")).tobytes()
    if dtype == "BF16":
        return "BF16", f32_to_bf16(arr).astype("<u2").tobytes()
    np_type = {"F32": "<f4", "F16": "<f2"}[dtype]
    return dtype, np.ascontiguousarray(arr, dtype=np.float32).astype(np_type).tobytes()


def save(path, tensors, dtype="F32", prefix="", metadata=None):
    """Writes name -> array to path in insertion order. Float arrays are stored as `dtype`
    (F32, F16 or BF16); integer arrays keep their type. `prefix` ("bert.") is put before every
    name except the joint heads' and names that already carry it."""
    if dtype not in ("F32", "F16", "BF16"):
        raise ValueError("dtype must be F32, F16 or BF16, not %r" % (dtype,))
    header = {"__metadata__": dict(metadata or {"format": "pt"})}
    chunks, offset = [], 0
    for name, arr in tensors.items():
        if prefix and not name.startswith(prefix) and not name.startswith(HEADS):
            name = prefix + name
        dt, data = _encode(arr, dtype)
        header[name] = {"dtype": dt, "shape": list(np.shape(arr)), "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for c in chunks:
            f.write(c)
