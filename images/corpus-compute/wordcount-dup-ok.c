/* wordcount-dup-ok - bug-free twin of wordcount-dup: the same source with FIXED set. */
#define FIXED 1
#include "wordcount-dup.c"
