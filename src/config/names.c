/* names.c: the spellings of the options' enum values (names.h). */
#include "config/names.h"
#include "layerprof.h"
#include "report/format_names.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Enum fields are read and written through an int lvalue by the option table's handlers. */
_Static_assert(sizeof(lp_mode) == sizeof(int), "lp_mode is int-sized");
_Static_assert(sizeof(lp_units) == sizeof(int), "lp_units is int-sized");
_Static_assert(sizeof(lp_format) == sizeof(int), "lp_format is int-sized");
_Static_assert(sizeof(lp_fill) == sizeof(int), "lp_fill is int-sized");
_Static_assert(sizeof(lp_dtype) == sizeof(int), "lp_dtype is int-sized");
_Static_assert(sizeof(lp_cuda_timing) == sizeof(int), "lp_cuda_timing is int-sized");

static const lp_cfg_name mode_names[] = {
    {"hooks", LP_MODE_HOOKS}, {"graph", LP_MODE_GRAPH}, {"markers", LP_MODE_MARKERS}};
static const lp_cfg_name units_names[] = {
    {"auto", LP_UNITS_AUTO}, {"us", LP_UNITS_US}, {"ms", LP_UNITS_MS}, {"s", LP_UNITS_S}};
#define AS_CFG_NAME(value, name) {name, value},
static const lp_cfg_name format_names[] = {LP_FORMAT_NAMES(AS_CFG_NAME)};
static const lp_cfg_name cuda_timing_names[] = {{"auto", LP_CUDA_TIMING_AUTO},
                                                {"cupti", LP_CUDA_TIMING_CUPTI},
                                                {"events", LP_CUDA_TIMING_EVENTS},
                                                {"off", LP_CUDA_TIMING_OFF}};
static const lp_cfg_name fill_names[] = {{"random", LP_FILL_RANDOM}, {"zeros", LP_FILL_ZEROS},
                                         {"ones", LP_FILL_ONES},     {"file", LP_FILL_FILE},
                                         {"rand", LP_FILL_RANDOM},   {"zero", LP_FILL_ZEROS},
                                         {"one", LP_FILL_ONES}};

const lp_cfg_names lp_cfg_modes = {mode_names, COUNT(mode_names), "mode", "graph"};
const lp_cfg_names lp_cfg_units = {units_names, COUNT(units_names), "units", NULL};
const lp_cfg_names lp_cfg_formats = {format_names, COUNT(format_names), "format", NULL};
const lp_cfg_names lp_cfg_fills = {fill_names, COUNT(fill_names), "fill", NULL};
const lp_cfg_names lp_cfg_cuda_timings = {cuda_timing_names, COUNT(cuda_timing_names),
                                          "CUDA timing", NULL};

const char *lp_cfg_name_of(const lp_cfg_names *t, int value) {
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].value == value) return t->v[i].name;
    return NULL;
}
