/* dcl-singleton-ok - the bug-free twin of dcl-singleton: the same program with the fix (FIXED). */
#define FIXED 1
#include "dcl-singleton.c"
