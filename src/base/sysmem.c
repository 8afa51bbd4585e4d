/* sysmem.c: see sysmem.h. */
#define _POSIX_C_SOURCE 200809L
#include "base/sysmem.h"

#include <stdio.h>
#include <string.h>

int64_t lp_mem_available(void) {
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return -1;
    char line[256];
    long long kb = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1) break;
    fclose(f);
    return kb < 0 ? -1 : (int64_t)kb * 1024;
}
