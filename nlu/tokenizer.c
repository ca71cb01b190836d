/* tokenizer.c — being written. */
