#include "kvm/hostcpu.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whether the whitespace-separated word w is in s[0..n). */
static bool has_word(const char *s, size_t n, const char *w)
{
    size_t wl = strlen(w);
    for (size_t i = 0; i + wl <= n; i++) {
        if (memcmp(s + i, w, wl))
            continue;
        bool start = i == 0 || s[i - 1] == ' ' || s[i - 1] == '\t' || s[i - 1] == ':';
        bool end = i + wl == n || s[i + wl] == ' ' || s[i + wl] == '\t' || s[i + wl] == '\n';
        if (start && end)
            return true;
    }
    return false;
}

bool hostcpu_flag_in(const char *text, size_t n, const char *flag)
{
    for (size_t at = 0; at < n;) {
        const char *nl = memchr(text + at, '\n', n - at);
        size_t len = nl ? (size_t)(nl - (text + at)) : n - at;
        if (len >= 5 && !memcmp(text + at, "flags", 5))
            return has_word(text + at + 5, len - 5, flag);
        at += len + 1;
    }
    return false;
}

bool hostcpu_flag(const char *flag)
{
    char *buf = malloc(HOSTCPU_READ_MAX);
    if (!buf)
        return false;
    size_t n = 0;
    int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
    while (fd >= 0 && n < HOSTCPU_READ_MAX) {
        ssize_t r = read(fd, buf + n, HOSTCPU_READ_MAX - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    if (fd >= 0)
        close(fd);
    bool found = hostcpu_flag_in(buf, n, flag);
    free(buf);
    return found;
}
