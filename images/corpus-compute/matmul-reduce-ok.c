/* matmul-reduce-ok - bug-free twin of matmul-reduce: the same source with FIXED set. */
#define FIXED 1
#include "matmul-reduce.c"
