/* spin-tts-plain-ok - bug-free twin of spin-tts-plain: the same source with FIXED set. */
#define FIXED 1
#include "spin-tts-plain.c"
