/* sysmem.h: how much memory a request may take before Linux's overcommit turns it into an OOM kill.
 */
#ifndef LP_SYSMEM_H
#define LP_SYSMEM_H

#include <stdint.h>

/* MemAvailable from /proc/meminfo in bytes, or -1 when unknown. */
int64_t lp_mem_available(void);

#endif
