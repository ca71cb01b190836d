/* asr_jsgf.c — the bot's language as a JSGF grammar (asr_lang.h): one alternative per
 * sentence pattern, one rule per slot class. It accepts the examples' exact patterns with
 * any value of their classes and nothing else; the class n-gram model (asr_ngram.c), the
 * default, also accepts their recombinations.
 */
#include "sdk/base/alloc.h"
#include "services/asr_lang.h"

char *svc_lang_jsgf(const svc_lang *l)
{
    pl_strbuf o = { 0 };
    pl_strbuf_printf(&o,
                     "#JSGF V1.0;\n// built by parley from %s\ngrammar parley;\n\n"
                     "public <utterance> =",
                     l->source);
    for (int i = 0; i < l->sentences.n; i++)
        pl_strbuf_printf(&o, "%s\n    ( %s )", i ? " |" : "", l->sentences.s[i]);
    pl_strbuf_printf(&o, ";\n");
    for (int s = 0; s < l->n_classes; s++) {
        const svc_strset *c = &l->classes[s];
        if (!c->n)
            continue;
        pl_strbuf_printf(&o, "\n// slot %s%s\n<c_%d> =", l->slot[s % l->n_slots],
                         s < l->n_slots ? "" : ", plural", s);
        for (int i = 0; i < c->n; i++)
            pl_strbuf_printf(&o, "%s %s", i ? " |" : "", c->s[i]);
        pl_strbuf_printf(&o, ";\n");
    }
    if (o.failed) {
        pl_free(o.s);
        return NULL;
    }
    return o.s;
}
