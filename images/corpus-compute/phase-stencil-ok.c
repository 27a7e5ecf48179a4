/* phase-stencil-ok - bug-free twin of phase-stencil: the same source with FIXED set. */
#define FIXED 1
#include "phase-stencil.c"
