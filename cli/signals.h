/* signals.h: SIGINT and SIGTERM stop a run cleanly (signals.c). */
#ifndef LP_CLI_SIGNALS_H
#define LP_CLI_SIGNALS_H

#include "layerprof.h"

/* First with NULL (installs the handlers), then with the session once open: the first SIGINT or
 * SIGTERM asks it to stop, also when caught before it existed; a second one kills. */
void cli_signals_watch(lp_session *s);
/* Before `s` is closed: a late signal no longer touches it (the handlers stay one-shot). */
void cli_signals_unwatch(void);
/* The first signal caught, or 0. */
int cli_signal_caught(void);

#endif
