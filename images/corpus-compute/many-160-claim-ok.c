/* many-160-claim-ok - bug-free twin of many-160-claim: the same source with FIXED set. */
#define FIXED 1
#include "many-160-claim.c"
