/* bert.c — being written. */
