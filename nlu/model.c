/* model.c — being written. */
