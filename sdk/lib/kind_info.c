/* kind_info.c — the public description of node kinds (parley_kind_* in parley/pipeline.h).
 *
 * It copies what a kind's static tables say (kinds.c lists the kinds, each module defines
 * its own) into one block the caller frees, with message and param types in words, for
 * `parley inspect` and for tools that write graphs. What the engine does with the tables
 * (checking a graph against them) is pipeline/'s.
 */
#include <stdio.h>
#include <string.h>

#include "parley/pipeline.h"
#include "pipeline/graph.h"
#include "sdk/base/alloc.h"
#include "sdk/base/error.h"
#include "sdk/lib/kinds.h"

enum { TYPES_CAP = 32 }; /* "audio|text|nlu|reply" and its NUL fit */

const char *parley_kind_name(size_t i)
{
    for (size_t j = 0; j < i; j++) /* i may be past the end */
        if (!lib_kinds[j])
            return NULL;
    return lib_kinds[i] ? lib_kinds[i]->name : NULL;
}

static const char *param_type(pipe_param_type t)
{
    static const char *const names[] = {
        [PIPE_P_STRING] = "string", [PIPE_P_PATH] = "path", [PIPE_P_INT] = "int",
        [PIPE_P_DOUBLE] = "number", [PIPE_P_BOOL] = "bool",
    };
    return names[t];
}

/* Writes the names of the type bits to buf (TYPES_CAP bytes): "text|nlu". */
static void type_names(unsigned types, char *buf)
{
    buf[0] = '\0';
    for (unsigned b = PIPE_T_AUDIO; b <= PIPE_T_REPLY; b <<= 1)
        if (types & b)
            snprintf(buf + strlen(buf), TYPES_CAP - strlen(buf), "%s%s", buf[0] ? "|" : "",
                     pipe_type_name(b));
}

parley_status parley_kind_describe(const char *name, parley_kind_info **out)
{
    if (!out)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_kind_describe: out is NULL");
    *out = NULL;
    if (!name)
        return pl_fail(PARLEY_ERR_INVALID_ARG, "parley_kind_describe: name is NULL");
    const pipe_kind *k = lib_kind_find(name);
    if (!k)
        return pl_fail(PARLEY_ERR_NOT_FOUND, "no node kind '%s'", name);
    size_t n_ports = 0, n_params = 0;
    while (k->ports[n_ports].name)
        n_ports++;
    while (k->params && k->params[n_params].name)
        n_params++;
    parley_kind_info *r = pl_malloc(sizeof *r + n_ports * (sizeof(parley_port_info) + TYPES_CAP) +
                                    n_params * sizeof(parley_param_info));
    if (!r)
        return pl_nomem("describing node kind '%s'", name);
    parley_port_info *ports = (parley_port_info *)(r + 1);
    parley_param_info *params = (parley_param_info *)(ports + n_ports);
    char *types = (char *)(params + n_params);
    for (size_t i = 0; i < n_ports; i++) {
        const pipe_port_spec *ps = &k->ports[i];
        char *t = types + i * TYPES_CAP;
        type_names(ps->types, t);
        ports[i] = (parley_port_info){ ps->name, ps->dir == PIPE_IN, t, ps->required, ps->doc };
    }
    for (size_t i = 0; i < n_params; i++) {
        const pipe_param_spec *ps = &k->params[i];
        int range = ps->type == PIPE_P_INT || ps->type == PIPE_P_DOUBLE;
        params[i] = (parley_param_info){
            ps->name, param_type(ps->type), range, range ? ps->lo : 0, range ? ps->hi : 0, ps->def,
            ps->doc
        };
    }
    *r = (parley_kind_info){ k->name, k->doc, (int)n_ports, ports, (int)n_params, params };
    *out = r;
    return PARLEY_OK;
}

void parley_kind_info_free(parley_kind_info *info)
{
    pl_free(info); /* one block holds everything (see parley_kind_describe) */
}
