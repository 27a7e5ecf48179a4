/* order-init-ok - the bug-free twin of order-init: the same program with the fix (FIXED). */
#define FIXED 1
#include "order-init.c"
