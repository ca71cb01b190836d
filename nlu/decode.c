/* decode.c — being written. */
