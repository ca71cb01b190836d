/* kinds.c — the table of node kinds a graph may name.
 *
 * Kinds are defined in their own modules (services/, nlu/, dialog/) and listed here by
 * their extern names; this file holds no node of its own. Adding a kind = one extern
 * line and one table entry.
 */
#include <string.h>

#include "pipeline/graph.h"

extern const pipe_kind svc_kind_stdin, svc_kind_stdout, svc_kind_api, svc_kind_asr_stub;
extern const pipe_kind nlu_kind_bert;
extern const pipe_kind dm_kind_frames;

static const pipe_kind *const kinds[] = {
    &svc_kind_stdin,    &svc_kind_stdout, &svc_kind_api,
    &svc_kind_asr_stub, &nlu_kind_bert,   &dm_kind_frames,
};

const pipe_kind *pipe_kind_at(size_t i)
{
    return i < sizeof kinds / sizeof *kinds ? kinds[i] : NULL;
}

const pipe_kind *pipe_kind_find(const char *name)
{
    const pipe_kind *k;
    for (size_t i = 0; (k = pipe_kind_at(i)); i++)
        if (!strcmp(k->name, name))
            return k;
    return NULL;
}
