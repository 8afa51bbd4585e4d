/* labels.h: a run's labels ("host=a", "rank=3"): where a report came from, stored in the JSON
 * report's run object and added to every series of the OpenMetrics exposition, so the same words
 * name the run offline and in Prometheus. Checked with Prometheus' rules for label names and
 * values. */
#ifndef LP_BASE_LABELS_H
#define LP_BASE_LABELS_H

#include <stddef.h>

#define LP_MAX_LABELS 16     /* per run: each one multiplies nothing, but lengthens every series */
#define LP_LABEL_NAME_MAX 64 /* bytes */
#define LP_LABEL_VALUE_MAX 256 /* bytes */

/* Checks one "NAME=VALUE": NAME matches [a-zA-Z_][a-zA-Z0-9_]*, does not start with "__"
 * (Prometheus' own), and is none of the labels layerprof's series carry or Prometheus adds at a
 * scrape (model, module, class, le, job, instance); VALUE is valid UTF-8, not empty. At most the
 * lengths above. LP_ERR_INVALID with a message that starts with `subject`. */
int lp_label_check(const char *subject, const char *text);

/* LP_ERR_INVALID when two of labels[0..n) have the same name, or n is over LP_MAX_LABELS. */
int lp_labels_check_list(const char *subject, const char *const *labels, size_t n);

#endif
