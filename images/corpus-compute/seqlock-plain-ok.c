/* seqlock-plain-ok - bug-free twin of seqlock-plain: the same source with FIXED set. */
#define FIXED 1
#include "seqlock-plain.c"
