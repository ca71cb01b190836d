/* safetensors.c — being written. */
