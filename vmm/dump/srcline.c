/* Source lines via addr2line (srcline.h). */
#include "dump/srcline.h"
#include "lib/util.h"
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

void srcline_parse(const char *line, char *out, size_t len)
{
    out[0] = '\0';
    size_t n = strcspn(line, "\n");
    const char *disc = strstr(line, " (discriminator");
    if (disc && (size_t)(disc - line) < n)
        n = (size_t)(disc - line);
    /* "file:line": the last colon, digits after it, a line number above zero. */
    size_t colon = n;
    while (colon > 0 && line[colon - 1] != ':')
        colon--;
    if (colon < 2 || colon == n)
        return;
    uint64_t num = 0;
    for (size_t i = colon; i < n; i++) {
        if (line[i] < '0' || line[i] > '9' || num > 100000000)
            return;
        num = num * 10 + (uint64_t)(line[i] - '0');
    }
    if (num == 0 || (colon == 3 && !strncmp(line, "??:", 3)))
        return;
    if (n >= len)
        return; /* a path too long to show whole: better nothing than a cut name */
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
            return; /* control characters from a hostile image stay out of terminals */
    memcpy(out, line, n);
    out[n] = '\0';
}

int srcline_resolve(const char *image, const uint64_t *addrs, size_t n,
                    char out[][SRCLINE_LEN], char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++)
        out[i][0] = '\0';
    if (n == 0)
        return 0;
    if (n > SRCLINE_MAX) {
        snprintf(err, errlen, "at most %d addresses at a time", SRCLINE_MAX);
        return -1;
    }
    const char *tool = getenv("JINX_ADDR2LINE");
    if (!tool || !*tool)
        tool = "addr2line";
    char hex[SRCLINE_MAX][24];
    char *argv[SRCLINE_MAX + 4];
    int a = 0;
    argv[a++] = (char *)tool;
    argv[a++] = (char *)"-e";
    argv[a++] = (char *)image;
    for (size_t i = 0; i < n; i++) {
        snprintf(hex[i], sizeof hex[i], "0x%" PRIx64, addrs[i]);
        argv[a++] = hex[i];
    }
    argv[a] = NULL;

    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, tool, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pfd[1]);
    if (rc != 0) {
        close(pfd[0]);
        snprintf(err, errlen, "cannot run %s: %s (install binutils for source lines)", tool,
                 strerror(rc));
        return -1;
    }
    /* Read at most a bounded amount, for at most 10 s: a huge or hostile image must not
     * hang inspect. */
    size_t cap = n * (SRCLINE_LEN + 64) + 1, got = 0;
    char *buf = malloc(cap);
    uint64_t deadline = mono_ns() + 10000000000ULL;
    bool timed_out = false;
    while (buf && got + 1 < cap) {
        uint64_t t = mono_ns();
        if (t >= deadline) {
            timed_out = true;
            break;
        }
        struct pollfd p = {.fd = pfd[0], .events = POLLIN};
        int pr = poll(&p, 1, (int)((deadline - t) / 1000000 + 1));
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            continue;
        ssize_t r = read(pfd[0], buf + got, cap - 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(pfd[0]);
    if (timed_out || !buf || got + 1 >= cap)
        kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!buf) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    buf[got] = '\0';
    if (timed_out || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        free(buf);
        snprintf(err, errlen, "%s on %s %s", tool, image,
                 timed_out ? "took more than 10 s" : "failed");
        return -1;
    }
    int found = 0;
    char *line = buf;
    for (size_t i = 0; i < n && *line; i++) {
        srcline_parse(line, out[i], SRCLINE_LEN);
        found += out[i][0] != '\0';
        char *nl = strchr(line, '\n');
        if (!nl)
            break;
        line = nl + 1;
    }
    free(buf);
    return found;
}
