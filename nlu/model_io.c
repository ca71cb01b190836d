/* model_io.c — being written. */
