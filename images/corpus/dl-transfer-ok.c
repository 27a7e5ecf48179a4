/* dl-transfer-ok - the bug-free twin of dl-transfer: the same program with the fix (FIXED). */
#define FIXED 1
#include "dl-transfer.c"
