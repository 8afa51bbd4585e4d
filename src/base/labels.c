/* labels.c: Prometheus' rules for the labels of a run (labels.h). A label that broke them would
 * be refused by the scraper for the whole exposition, far from the flag that set it: checked
 * here, where the message can name the flag. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/labels.h"
#include "layerprof.h"

/* What layerprof's series carry already, and what Prometheus adds to every scraped series (a
 * label of the same name would be renamed exported_NAME, silently). */
static const char *const reserved[] = {"model", "module", "class", "le", "job", "instance"};

/* The length of the valid UTF-8 character at s, or 0 (overlong forms, surrogates, past U+10FFFF
 * and stray continuation bytes are invalid). */
static size_t utf8_char(const unsigned char *s) {
    if (s[0] < 0x80) return 1;
    size_t len = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC2 ? 2 : 0;
    if (!len || s[0] > 0xF4) return 0;
    uint32_t cp = s[0] & (0x7F >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    static const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return len;
}

static int valid_utf8(const char *s) {
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t n = utf8_char(p);
        if (!n) return 0;
        p += n;
    }
    return 1;
}

/* s[0..len) quoted for a message: clipped to 60 bytes, control characters shown as '?', so the
 * message stays one line whatever was typed. Not option_parse.c's quoting: that file calls this
 * one, and files call one way (tests/arch/check_rings.py). */
enum { QUOTE_MAX = 72 };
static const char *quote(const char *s, size_t len, char *buf) {
    size_t n = len > 60 ? 60 : len, o = 0;
    buf[o++] = '\'';
    for (size_t i = 0; i < n; i++)
        buf[o++] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
    if (n < len) o += (size_t)snprintf(buf + o, QUOTE_MAX - o, "...");
    buf[o++] = '\'';
    buf[o] = '\0';
    return buf;
}

int lp_label_check(const char *subject, const char *text) {
    char q[QUOTE_MAX];
    const char *eq = strchr(text, '=');
    if (!eq)
        return lp_error_set(LP_ERR_INVALID, "%s takes NAME=VALUE (e.g. rank=3), not %s", subject,
                            quote(text, strlen(text), q));
    size_t len = (size_t)(eq - text);
    int ok = len > 0 && len <= LP_LABEL_NAME_MAX;
    for (size_t i = 0; ok && i < len; i++) {
        char c = text[i];
        ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
             (i > 0 && c >= '0' && c <= '9');
    }
    if (!ok)
        return lp_error_set(LP_ERR_INVALID,
                            "%s: the label name %s is not one Prometheus accepts "
                            "([a-zA-Z_][a-zA-Z0-9_]*, at most %d characters)",
                            subject, quote(text, len, q), LP_LABEL_NAME_MAX);
    if (len >= 2 && text[0] == '_' && text[1] == '_')
        return lp_error_set(LP_ERR_INVALID,
                            "%s: label names starting with '__' are Prometheus' own ('%.*s')",
                            subject, (int)len, text);
    for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
        if (strlen(reserved[i]) == len && strncmp(reserved[i], text, len) == 0)
            return lp_error_set(LP_ERR_INVALID,
                                "%s: the label '%s' is taken (layerprof's series carry model, "
                                "module, class and le; Prometheus adds job and instance)",
                                subject, reserved[i]);
    const char *value = eq + 1;
    if (!*value)
        return lp_error_set(LP_ERR_INVALID,
                            "%s: the label '%.*s' has an empty value (Prometheus reads it as no "
                            "label)",
                            subject, (int)len, text);
    if (strlen(value) > LP_LABEL_VALUE_MAX)
        return lp_error_set(LP_ERR_INVALID, "%s: the value of label '%.*s' is over %d bytes",
                            subject, (int)len, text, LP_LABEL_VALUE_MAX);
    if (!valid_utf8(value))
        return lp_error_set(LP_ERR_INVALID, "%s: the value of label '%.*s' is not valid UTF-8",
                            subject, (int)len, text);
    return LP_OK;
}

int lp_labels_check_list(const char *subject, const char *const *labels, size_t n) {
    char q[QUOTE_MAX];
    if (n > LP_MAX_LABELS)
        return lp_error_set(LP_ERR_INVALID, "%s: at most %d labels, not %zu", subject,
                            LP_MAX_LABELS, n);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++) {
            size_t a = strcspn(labels[i], "="), b = strcspn(labels[j], "=");
            if (a == b && strncmp(labels[i], labels[j], a) == 0)
                return lp_error_set(LP_ERR_INVALID, "%s: the label %s is given twice", subject,
                                    quote(labels[i], a, q));
        }
    return LP_OK;
}
