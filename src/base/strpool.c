/* strpool.c: see strpool.h. Text lives in chunks that are only appended to, so a string never
 * moves; an open-addressing table of (hash, pointer) finds equal texts. */
#include "base/strpool.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_BYTES 16384

typedef struct chunk {
    struct chunk *next;
    size_t used, cap;
    char text[];
} chunk;

typedef struct slot {
    uint64_t hash;
    const char *s; /* NULL: empty */
} slot;

struct lp_strpool {
    unsigned refs;
    chunk *chunks; /* the first is where short strings go; the others are full or one string */
    slot *slots;
    size_t cap, n; /* cap a power of two, at most half full */
};

static uint64_t hash_of(const char *s, size_t len) {
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h;
}

lp_strpool *lp_strpool_new(void) {
    lp_strpool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->refs = 1;
    return p;
}

lp_strpool *lp_strpool_retain(lp_strpool *p) {
    p->refs++;
    return p;
}

void lp_strpool_release(lp_strpool *p) {
    if (!p || --p->refs > 0) return;
    for (chunk *c = p->chunks, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    free(p->slots);
    free(p);
}

static int grow_table(lp_strpool *p) {
    size_t cap = p->cap ? p->cap * 2 : 256;
    slot *slots = calloc(cap, sizeof *slots);
    if (!slots) return -1;
    for (size_t i = 0; i < p->cap; i++) {
        if (!p->slots[i].s) continue;
        size_t j = p->slots[i].hash & (cap - 1);
        while (slots[j].s)
            j = (j + 1) & (cap - 1);
        slots[j] = p->slots[i];
    }
    free(p->slots);
    p->slots = slots;
    p->cap = cap;
    return 0;
}

static chunk *chunk_new(size_t cap) {
    chunk *c = malloc(sizeof *c + cap);
    if (c) {
        c->used = 0;
        c->cap = cap;
    }
    return c;
}

/* Room for `size` bytes that will never move: the newest chunk's tail, or a new chunk. A long
 * string (a cat of many tensors' shapes) gets a chunk of its own, linked behind the newest, so the
 * newest keeps its free tail for the short ones. */
static char *room(lp_strpool *p, size_t size) {
    chunk *c = p->chunks;
    if (c && c->cap - c->used >= size) {
        c->used += size;
        return c->text + c->used - size;
    }
    int own = size > CHUNK_BYTES / 4;
    chunk *n = chunk_new(own ? size : CHUNK_BYTES);
    if (!n) return NULL;
    n->used = size;
    if (own && c) {
        n->next = c->next;
        c->next = n;
    } else {
        n->next = c;
        p->chunks = n;
    }
    return n->text;
}

const char *lp_strpool_intern(lp_strpool *p, const char *s) {
    size_t len = strlen(s);
    uint64_t h = hash_of(s, len);
    for (size_t i = p->cap ? h & (p->cap - 1) : 0; p->cap && p->slots[i].s;
         i = (i + 1) & (p->cap - 1))
        if (p->slots[i].hash == h && strcmp(p->slots[i].s, s) == 0) return p->slots[i].s;
    if ((p->n + 1) * 2 > p->cap && grow_table(p)) return NULL;
    char *copy = room(p, len + 1);
    if (!copy) return NULL;
    memcpy(copy, s, len + 1);
    size_t i = h & (p->cap - 1);
    while (p->slots[i].s)
        i = (i + 1) & (p->cap - 1);
    p->slots[i] = (slot){h, copy};
    p->n++;
    return copy;
}

size_t lp_strpool_count(const lp_strpool *p) {
    return p->n;
}
