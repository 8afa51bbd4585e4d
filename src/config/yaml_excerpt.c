/* yaml_excerpt.c: positioned messages for the YAML reader: "file:line:column: message", the
 * offending line indented by two spaces, and a caret under the column. Columns count characters as
 * libyaml does, so the caret lands where libyaml's mark says, whatever the encoding, tabs, line
 * ends or line length. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "config/yaml_internal.h"

/* The length of the line break at s[i], 0 if none. libyaml ends a line at each of these, so its
 * line numbers and ours agree. */
static size_t break_len(const char *s, size_t len, size_t i) {
    const unsigned char *u = (const unsigned char *)s;
    if (u[i] == '\n') return 1;
    if (u[i] == '\r') return i + 1 < len && u[i + 1] == '\n' ? 2 : 1;
    if (u[i] == 0xC2 && i + 1 < len && u[i + 1] == 0x85) return 2; /* NEL */
    if (u[i] == 0xE2 && i + 2 < len && u[i + 1] == 0x80 && (u[i + 2] == 0xA8 || u[i + 2] == 0xA9))
        return 3; /* LS, PS */
    return 0;
}

/* Where the text proper starts: libyaml drops a UTF-8 byte order mark before counting columns. */
static size_t text_start(const cfg_ctx *c) {
    return c->len >= 3 && memcmp(c->text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
}

/* UTF-16 files are decoded by libyaml but cannot be quoted byte for byte. */
static int text_is_utf16(const cfg_ctx *c) {
    const unsigned char *u = (const unsigned char *)c->text;
    return c->len >= 2 && ((u[0] == 0xFF && u[1] == 0xFE) || (u[0] == 0xFE && u[1] == 0xFF));
}

static int is_continuation(unsigned char ch) {
    return (ch & 0xC0) == 0x80;
}

/* libyaml's reader reports a byte offset rather than a mark; columns count characters. */
static yaml_mark_t mark_at_offset(const cfg_ctx *c, size_t offset) {
    yaml_mark_t m = {offset, 0, 0};
    size_t i = text_start(c);
    if (offset > c->len) offset = c->len;
    while (i < offset) {
        size_t b = break_len(c->text, c->len, i);
        if (b) {
            m.line++;
            m.column = 0;
            i += b;
        } else {
            if (!is_continuation((unsigned char)c->text[i])) m.column++;
            i++;
        }
    }
    return m;
}

/* The byte offset where 0-based line `line` starts, or SIZE_MAX past the end of the text. */
static size_t find_line(const cfg_ctx *c, size_t line) {
    size_t i = text_start(c), at = 0;
    while (at < line && i < c->len) {
        size_t b = break_len(c->text, c->len, i);
        i += b ? b : 1;
        at += b != 0;
    }
    return at == line ? i : SIZE_MAX;
}

/* 1 when nothing but white space follows the start of mark's line: libyaml reports an unclosed
 * bracket or quote there, and the message should say so rather than quote an empty line. */
static int at_end_of_text(const cfg_ctx *c, yaml_mark_t mark) {
    size_t i = find_line(c, mark.line);
    if (i == SIZE_MAX) return 1;
    for (; i < c->len; i++)
        if (!strchr(" \t\r\n", c->text[i])) return 0;
    return 1;
}

/* Appends "\n  LINE\n  CARET" for mark to buf; nothing when the line is empty or missing. Long
 * lines are cut to a window around the column so the caret stays on screen. */
static void format_excerpt(const cfg_ctx *c, yaml_mark_t mark, char *buf, size_t size) {
    enum { BEFORE = 60, WIDTH = 120 };
    buf[0] = '\0';
    if (text_is_utf16(c)) return;
    size_t i = find_line(c, mark.line);
    if (i == SIZE_MAX) return;
    size_t end = i;
    while (end < c->len && !break_len(c->text, c->len, end))
        end++;
    if (end == i) return;

    /* Skip to the window's first character, counting characters (columns) as libyaml does. */
    size_t first = mark.column > BEFORE + 20 ? mark.column - BEFORE : 0, col = 0;
    while (i < end && col < first) {
        i++;
        while (i < end && is_continuation((unsigned char)c->text[i]))
            i++;
        col++;
    }
    size_t off = 0;
    char line_buf[WIDTH * 4 + 16], caret[WIDTH + 16];
    size_t coff = 0;
    if (first) {
        memcpy(line_buf, "...", 3);
        memcpy(caret, "   ", 3);
        off = coff = 3;
    }
    size_t shown = 0;
    /* Bounded by bytes as well as characters: malformed UTF-8 can make a "character" long. */
    while (i < end && shown < WIDTH && off + 8 < sizeof line_buf) {
        unsigned char ch = (unsigned char)c->text[i];
        /* Control bytes would garble the terminal; a tab stays a tab so the caret lines up. */
        line_buf[off++] = ch < 0x20 && ch != '\t' ? '?' : (char)ch;
        i++;
        while (i < end && is_continuation((unsigned char)c->text[i]) && off + 8 < sizeof line_buf)
            line_buf[off++] = c->text[i++];
        if (col < mark.column) caret[coff++] = ch == '\t' ? '\t' : ' ';
        col++;
        shown++;
    }
    if (i < end) {
        memcpy(line_buf + off, "...", 3);
        off += 3;
    }
    line_buf[off] = '\0';
    while (col < mark.column && coff < WIDTH + 8) {
        caret[coff++] = ' ';
        col++;
    }
    caret[coff] = '\0';
    snprintf(buf, size, "\n  %s\n  %s^", line_buf, caret);
}

int cfg_error_at(const cfg_ctx *c, yaml_mark_t mark, const char *fmt, ...) {
    char msg[1024], excerpt[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    format_excerpt(c, mark, excerpt, sizeof excerpt);
    return lp_error_set(LP_ERR_INVALID, "%s:%zu:%zu: %s%s", c->name, mark.line + 1, mark.column + 1,
                        msg, excerpt);
}

int cfg_syntax_error(const cfg_ctx *c, const yaml_parser_t *p) {
    if (p->error == YAML_MEMORY_ERROR) return cfg_nomem();
    const char *problem = p->problem ? p->problem : "not valid YAML";
    if (p->error == YAML_READER_ERROR)
        return cfg_error_at(c, mark_at_offset(c, p->problem_offset), "syntax error: %s", problem);
    const char *where = at_end_of_text(c, p->problem_mark) ? " at the end of the file" : "";
    if (p->context)
        return cfg_error_at(c, p->problem_mark, "syntax error%s: %s (%s at line %zu, column %zu)",
                            where, problem, p->context, p->context_mark.line + 1,
                            p->context_mark.column + 1);
    return cfg_error_at(c, p->problem_mark, "syntax error%s: %s", where, problem);
}

int cfg_positioned(const cfg_ctx *c, yaml_mark_t mark, int status) {
    char msg[1024];
    if (status != LP_ERR_INVALID) return status;
    snprintf(msg, sizeof msg, "%s", lp_error_last());
    return cfg_error_at(c, mark, "%s", msg);
}

int cfg_nomem(void) {
    return lp_error_set(LP_ERR_NOMEM, "out of memory reading the configuration");
}
