/* Writing an HTML page from untrusted strings: a byte-counting output stream and the
 * escapers that make any string safe where it lands.
 *
 * Every string of a dump (symbols, paths, the command line, instruction text) may be
 * hostile. ho_text escapes it for HTML text and attribute values (& < > " ' become
 * entities; control characters become '?'), so it can never open a tag or leave a
 * quoted attribute. ho_json escapes it as a JSON string that can sit inside
 * <script type="application/json">: besides JSON's own escapes, < > & and U+2028/U+2029
 * become \uXXXX, so "</script>" or "<!--" can never appear in it. Both take a cap in
 * source bytes, which bounds the output at 6 bytes per source byte plus the quotes.
 * Bytes >= 0x80 pass through: invalid UTF-8 shows as U+FFFD in a browser, harmlessly. */
#ifndef JINX_HTML_OUT_H
#define JINX_HTML_OUT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct hout {
    FILE *f;
    size_t bytes;      /* written so far */
    bool err;          /* a write failed: the page is incomplete */
};

void ho_init(struct hout *h, FILE *f);
void ho_printf(struct hout *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ho_puts(struct hout *h, const char *s);
/* At most max bytes of s (NULL: nothing), escaped for HTML text and attribute values. */
void ho_text(struct hout *h, const char *s, size_t max);
/* At most max bytes of s (NULL: ""), as a quoted JSON string safe inside <script>. */
void ho_json(struct hout *h, const char *s, size_t max);

/* Standard base64 of len bytes into out (4 * ((len + 2) / 3) + 1 bytes). */
void ho_base64(const uint8_t *p, size_t len, char *out);

#endif
