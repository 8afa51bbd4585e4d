/* options.h: option helpers shared inside the core. */
#ifndef LP_OPTIONS_H
#define LP_OPTIONS_H

/* Parses "cpu", "cuda", "cuda:N"; *index is -1 when no index was given. */
int lp_device_parse(const char *device, int *is_cuda, int *index);

#endif
