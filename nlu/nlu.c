/* nlu.c — being written. */
