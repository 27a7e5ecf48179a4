/* Snapshot workload for the descriptor table: for DURATION_MS of virtual time, keeps
 * opening its own executable on a varying number of descriptors, moves one of them far
 * up the table (dup2 to 100..163), seeks each to its own offset, and checks every read
 * sees the file at that offset, then closes them all. A restore must bring back the
 * table as it was, however high the descriptors went meanwhile (the selftest compares
 * it), and the program must still pass from the restored state. Usage: fdchurn [MS] */
#include "check.h"
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    long duration_ms = argc > 1 ? atol(argv[1]) : 200;
    unsigned char head[64];
    int self = open("/proc/self/exe", O_RDONLY);
    CHECK(self >= 3 && read(self, head, sizeof head) == (ssize_t)sizeof head);
    CHECK(memcmp(head, "\x7f" "ELF", 4) == 0);
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (unsigned round = 0;; round++) {
        int fds[17], n = 1 + (int)(round % 16);
        for (int i = 0; i < n; i++) {
            fds[i] = open("/proc/self/exe", O_RDONLY | (i % 2 ? O_CLOEXEC : 0));
            CHECK(fds[i] >= 3);
            CHECK(lseek(fds[i], i, SEEK_SET) == i);
        }
        int high = 100 + (int)(round % 64);
        CHECK(dup2(fds[0], high) == high);
        fds[n++] = high;
        for (int i = 0; i < n; i++) {
            unsigned char c;
            off_t at = lseek(fds[i], 0, SEEK_CUR);
            CHECK(at >= 0 && at < (off_t)sizeof head && read(fds[i], &c, 1) == 1);
            CHECK(c == head[at]);
        }
        for (int i = 0; i < n; i++)
            CHECK(close(fds[i]) == 0);
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 >=
            duration_ms)
            break;
    }
    CHECK(close(self) == 0);
    return 0;
}
