/* vocab.c — being written. */
