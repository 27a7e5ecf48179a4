/* dcl-singleton-ok - bug-free twin of dcl-singleton: the same source with FIXED set. */
#define FIXED 1
#include "dcl-singleton.c"
