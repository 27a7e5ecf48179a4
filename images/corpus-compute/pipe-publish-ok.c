/* pipe-publish-ok - bug-free twin of pipe-publish: the same source with FIXED set. */
#define FIXED 1
#include "pipe-publish.c"
