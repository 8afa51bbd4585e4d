/* session_notes.c: the lines a report carries under its table, which every session file may add
 * (the mode, warnings, what the recording lacks). */
#include <stdio.h>

#include "api/session_internal.h"

void session_add_note(lp_session *s, const char *fmt, const char *arg) {
    if (s->n_notes < LP_MAX_NOTES) snprintf(s->notes[s->n_notes++], sizeof s->notes[0], fmt, arg);
}
