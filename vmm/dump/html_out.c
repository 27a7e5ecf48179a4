/* The escapers of html_out.h. */
#include "dump/html_out.h"
#include <stdarg.h>
#include <string.h>

void ho_init(struct hout *h, FILE *f)
{
    h->f = f;
    h->bytes = 0;
    h->err = false;
}

static void put(struct hout *h, const char *s, size_t n)
{
    if (!n)
        return;
    if (fwrite(s, 1, n, h->f) != n)
        h->err = true;
    h->bytes += n;
}

void ho_printf(struct hout *h, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vfprintf(h->f, fmt, ap);
    va_end(ap);
    if (n < 0)
        h->err = true;
    else
        h->bytes += (size_t)n;
}

void ho_puts(struct hout *h, const char *s)
{
    put(h, s, strlen(s));
}

void ho_text(struct hout *h, const char *s, size_t max)
{
    if (!s)
        return;
    size_t start = 0, i = 0;
    for (; i < max && s[i]; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *rep = NULL;
        switch (c) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&#39;"; break;
        default:
            if (c < 0x20 || c == 0x7f)
                rep = "?";
        }
        if (rep) {
            put(h, s + start, i - start);
            ho_puts(h, rep);
            start = i + 1;
        }
    }
    put(h, s + start, i - start);
}

void ho_json(struct hout *h, const char *s, size_t max)
{
    put(h, "\"", 1);
    size_t start = 0, i = 0;
    for (; s && i < max && s[i]; i++) {
        unsigned char c = (unsigned char)s[i];
        char rep[8] = "";
        if (c == '"' || c == '\\')
            snprintf(rep, sizeof rep, "\\%c", c);
        else if (c < 0x20 || c == 0x7f || c == '<' || c == '>' || c == '&')
            snprintf(rep, sizeof rep, "\\u%04x", c);
        else if (c == 0xE2 && i + 2 < max && (unsigned char)s[i + 1] == 0x80 &&
                 ((unsigned char)s[i + 2] == 0xA8 || (unsigned char)s[i + 2] == 0xA9)) {
            /* U+2028/U+2029: legal in JSON, line breaks to older JavaScript parsers */
            snprintf(rep, sizeof rep, "\\u%04x", 0x2000 + ((unsigned char)s[i + 2] - 0x80));
            put(h, s + start, i - start);
            ho_puts(h, rep);
            i += 2;
            start = i + 1;
            continue;
        }
        if (rep[0]) {
            put(h, s + start, i - start);
            ho_puts(h, rep);
            start = i + 1;
        }
    }
    if (s)
        put(h, s + start, i - start);
    put(h, "\"", 1);
}

void ho_base64(const uint8_t *p, size_t len, char *out)
{
    static const char tab[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < len)
            v |= p[i + 2];
        out[o++] = tab[(v >> 18) & 63];
        out[o++] = tab[(v >> 12) & 63];
        out[o++] = i + 1 < len ? tab[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < len ? tab[v & 63] : '=';
    }
    out[o] = '\0';
}
