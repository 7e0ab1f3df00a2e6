#ifndef C_HEAP_USAGE_H
#define C_HEAP_USAGE_H
#include <stddef.h>

/// Bytes of heap in use (glibc's mallinfo2: allocated small blocks plus mmapped blocks).
size_t bluejay_heap_in_use(void);

#endif
