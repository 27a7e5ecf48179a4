/* Tiny self-checking helpers for guest test programs: a failed CHECK prints the line and
 * exits 1, so the integration runner sees exactly which expectation broke. */
#ifndef GUEST_CHECK_H
#define GUEST_CHECK_H
#include <stdio.h>
#include <stdlib.h>
#define CHECK(c) do { if (!(c)) { fprintf(stderr, "CHECK FAILED %s:%d: %s\n", __FILE__, __LINE__, #c); exit(1); } } while (0)
#endif
