/* kinds.h — the node kinds built into the library, the table every graph the public API
 * opens is checked against (pipe_graph_opts.kinds).
 *
 * The engine (pipeline/) knows no kind of its own; the modules define them (services/, nlu/,
 * dialog/) and this layer lists them.
 */
#ifndef SDK_LIB_KINDS_H
#define SDK_LIB_KINDS_H

#include "pipeline/node.h"

/* Every built-in kind, NULL-terminated, in `parley inspect` order. */
extern const pipe_kind *const lib_kinds[];

/* The same for parley_pipeline_params.text_io: text.stdin and text.stdout are the api's two
 * halves (services/api_node.h), and there is no api kind. */
extern const pipe_kind *const lib_kinds_text_io[];

/* The built-in kind called `name`, or NULL. */
const pipe_kind *lib_kind_find(const char *name);

#endif
