/* asr_ps_node.c — the `asr.pocketsphinx` node: offline speech recognition specialized to
 * the bot (services/asr.h).
 *
 * At creation it builds (or finds cached) the language model of the `nlu_data` it is given,
 * loads pocketsphinx with it, and then recognizes each user's utterances as they stream in.
 * The decoding is asr_pocketsphinx.c's, the stream bookkeeping asr_node.c's, the language
 * model asr_lang.c's; this file only reads params and wires them together.
 */
#include <string.h>

#include "sdk/base/alloc.h"
#include "services/asr.h"

typedef struct ps_node {
    svc_ps *ps;
    svc_asr *asr;
} ps_node;

static const pipe_param_spec params[] = {
    { "nlu_data", PIPE_P_PATH, "", 0, 0,
      "the bot's nlu.yaml: the recognizer listens for what it says (empty: the generic model)",
      NULL },
    { "language", PIPE_P_STRING, "ngram", 0, 0,
      "how the bot's examples become what the recognizer listens for: a class trigram model "
      "(phrasings recombine) or a grammar of their exact patterns",
      "ngram|grammar" },
    { "generic_weight", PIPE_P_DOUBLE, "0", 0, 0.5,
      "the share of the class model's probability given to the generic model's 300 most "
      "frequent words that the bot lacks, so words outside the bot (\"just\", \"gonna\") are "
      "heard as themselves; 0: none (in noise they take the place of the bot's words)",
      NULL },
    { "lexicon", PIPE_P_PATH, "", 0, 0,
      "the bot's own pronunciations, in the dictionary's format (\"grande G R AA N D EY\"): "
      "heard before the dictionary's, or before the guess from the spelling of a word it lacks "
      "(empty: none)",
      NULL },
    { "cache_dir", PIPE_P_PATH, "", 0, 0,
      "where built language models are kept (empty: $XDG_CACHE_HOME/parley/asr or "
      "~/.cache/parley/asr)",
      NULL },
    { "fallback", PIPE_P_BOOL, "true", 0, 0,
      "speech the bot's model cannot match goes to the generic English model (else: an error)",
      NULL },
    { "speaker_warp", PIPE_P_BOOL, "true", 0, 0,
      "a user's first utterance is heard through a deeper and a higher voice's frequency "
      "scale too, and the scale that fits best is kept for their next ones (the class model)",
      NULL },
    { "reject_below", PIPE_P_DOUBLE, SVC_PS_REJECT_BELOW, 0, 100,
      "an utterance whose confidence (100 plus the bot model's path score per frame; under 60, "
      "50 plus its margin over the generic model's) is under this is rejected: the dialog "
      "answers with its fallback (0: none is)",
      NULL },
    { "partial_ms", PIPE_P_INT, "200", 0, 60000, "least time between two partial hypotheses",
      NULL },
    { "hmm", PIPE_P_PATH, "", 0, 0, "acoustic model folder (empty: Debian's en-us)", NULL },
    { "dict", PIPE_P_PATH, "", 0, 0, "pronunciation dictionary (empty: Debian's cmudict-en-us)",
      NULL },
    { "lm", PIPE_P_PATH, "", 0, 0, "the generic language model (empty: Debian's en-us.lm.bin)",
      NULL },
    { NULL, 0, NULL, 0, 0, NULL, NULL },
};

static void node_destroy(void *state)
{
    ps_node *s = state;
    if (!s)
        return;
    svc_asr_free(s->asr);
    svc_ps_close(s->ps);
    pl_free(s);
}

static parley_status node_create(pipe_node *node, void **out)
{
    parley_status st = PARLEY_OK;
    svc_lang_info g;
    svc_ps_params p = svc_ps_params_default();
    const char *nlu = pipe_node_param_str(node, "nlu_data"), *v;
    if (*(v = pipe_node_param_str(node, "hmm")))
        p.hmm = v;
    if (*(v = pipe_node_param_str(node, "dict")))
        p.dict = v;
    if (*(v = pipe_node_param_str(node, "lm")))
        p.lm = v;
    p.fallback = pipe_node_param_bool(node, "fallback");
    p.speaker_warp = pipe_node_param_bool(node, "speaker_warp");
    p.second_opinion = pipe_node_param_double(node, "reject_below") > 0; /* else it is unused */
    if (*nlu) {
        svc_lang_params lp = {
            .kind = strcmp(pipe_node_param_str(node, "language"), "grammar") ? SVC_LANG_NGRAM
                                                                             : SVC_LANG_JSGF,
            .dict = p.dict,
            .cache_dir = pipe_node_param_str(node, "cache_dir"),
            .generic_weight = pipe_node_param_double(node, "generic_weight"),
            .generic_lm = p.lm,
            .lexicon = pipe_node_param_str(node, "lexicon"),
        };
        if ((st = svc_lang_build(nlu, &lp, &g)) != PARLEY_OK)
            return pl_wrap(st, "node '%s'", pipe_node_name(node));
        pl_log(PARLEY_LOG_INFO, "%s: language model %s (%d sentences, %d slot values%s)",
               pipe_node_name(node), g.path, g.sentences, g.values, g.cached ? ", cached" : "");
        p.bot = &g;
    }
    ps_node *s = pl_calloc(1, sizeof *s);
    if (!s)
        return pl_nomem("node '%s'", pipe_node_name(node));
    if ((st = svc_ps_open(&p, &s->ps)) != PARLEY_OK ||
        (st = svc_asr_new(&svc_ps_engine, s->ps, (long)pipe_node_param_int(node, "partial_ms"),
                          (float)pipe_node_param_double(node, "reject_below"), &s->asr)) !=
                PARLEY_OK) {
        node_destroy(s);
        return pl_wrap(st, "node '%s'", pipe_node_name(node));
    }
    *out = s;
    return PARLEY_OK;
}

static parley_status node_process(pipe_node *node, void *state, int port, pipe_msg *msg)
{
    ps_node *s = state;
    (void)port;
    return svc_asr_process(s->asr, node, msg);
}

const pipe_kind svc_kind_asr_pocketsphinx = {
    .name = "asr.pocketsphinx",
    .doc = "offline speech recognition (pocketsphinx) with a language model built from the "
           "bot's nlu.yaml",
    .ports = svc_asr_ports,
    .params = params,
    .workers = 2,
    .create = node_create,
    .process = node_process,
    .destroy = node_destroy,
};
