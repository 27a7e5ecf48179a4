/* wsq-last-ok - bug-free twin of wsq-last: the same source with FIXED set. */
#define FIXED 1
#include "wsq-last.c"
