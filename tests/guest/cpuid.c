/* Prints whether CPUID shows RDRAND and RDSEED: jinx hides them where the host lets it. */
#include <stdio.h>
#include <cpuid.h>
int main(void){ unsigned a,b,c,d; __cpuid(1,a,b,c,d); int rdrand=(c>>30)&1; __cpuid_count(7,0,a,b,c,d); int rdseed=(b>>18)&1; printf("rdrand=%d rdseed=%d\n", rdrand, rdseed); return 0; }
