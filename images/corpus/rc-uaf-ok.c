/* rc-uaf-ok - bug-free twin of rc-uaf: the same source with FIXED set. */
#define FIXED 1
#include "rc-uaf.c"
