/* format_names.h: every output format's names, the one list both tables read: the renderers'
 * (formats.c: lp_format_name, lp_format_parse) and the option table's (config/names.c: --format,
 * YAML `format:`), so a name one accepts the other always knows.
 *
 * X(value, name) per name: a format's canonical name comes first, its aliases after every
 * canonical one. No include: the user of the list has layerprof.h's lp_format. */
#ifndef LP_FORMAT_NAMES_H
#define LP_FORMAT_NAMES_H

#define LP_FORMAT_NAMES(X)                                                                         \
    X(LP_FORMAT_TREE, "tree")                                                                      \
    X(LP_FORMAT_JSON, "json")                                                                      \
    X(LP_FORMAT_CSV, "csv")                                                                        \
    X(LP_FORMAT_MARKDOWN, "markdown")                                                              \
    X(LP_FORMAT_TRACE, "trace")                                                                    \
    X(LP_FORMAT_HTML, "html")                                                                      \
    X(LP_FORMAT_SUMMARY, "summary")                                                                \
    X(LP_FORMAT_OPENMETRICS, "openmetrics")                                                        \
    X(LP_FORMAT_MARKDOWN, "md")                                                                    \
    X(LP_FORMAT_TRACE, "chrome")

#endif
