/* dl-transfer-ok - bug-free twin of dl-transfer: the same source with FIXED set. */
#define FIXED 1
#include "dl-transfer.c"
