/* config.c — being written. */
