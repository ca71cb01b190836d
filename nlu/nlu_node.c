/* nlu_node.c — the `nlu.bert` node: intent and slots for each turn, batched across users.
 *
 * The node's worker pops up to `max_batch` turns at once, waiting at most
 * `max_queue_delay_us` after the first for more (the engine's queue does the waiting,
 * pipeline/queue.c), and parses them in one parley_nlu_parse_batch() call: under load
 * many users share one pass through the model; a lone user waits no longer than the delay.
 * Each turn records the batch's NLU time and size. If a batch fails (say one text is not
 * UTF-8), its turns are parsed one by one so only the bad turn fails.
 * With `instances: N` the node opens the model N times (on a GPU: N copies, each with its
 * own stream) and each batch takes the next instance, so that N workers (`workers: N`)
 * run N batches at once; an instance serializes the batches that meet on it.
 * A turn's message takes its result as its payload, the intent and the slots it says (the
 * name and the canonical value of each) pointing into it.
 * The model itself is nlu/nlu.c; this file only adapts it to the graph.
 */
#include <stdatomic.h>

#include "parley/nlu.h"
#include "pipeline/node.h"
#include "sdk/base/alloc.h"

enum { MAX_INSTANCES = 16 };

typedef struct bert_state {
    int n;
    parley_nlu *nlu[MAX_INSTANCES];
    atomic_uint next; /* the instance the next batch takes, modulo n */
} bert_state;

static const pipe_port_spec ports[] = {
    { "text", PIPE_IN, PIPE_T_TEXT, 1, "user text" },
    { "result", PIPE_OUT, PIPE_T_NLU, 0, "the text with its intent and slots" },
    { NULL, 0, 0, 0, NULL },
};

static const pipe_param_spec params[] = {
    { "model", PIPE_P_PATH, NULL, 0, 0,
      "model directory (config.json, model.safetensors, vocab.txt)", NULL },
    { "device", PIPE_P_STRING, "auto", 0, 0, "auto, cpu or cuda:N", "auto|cpu|cuda|cuda:N" },
    { "max_batch", PIPE_P_INT, "32", 1, 1024, "most turns parsed in one pass", NULL },
    { "max_queue_delay_us", PIPE_P_INT, "2000", 0, 1000000,
      "longest wait after a turn arrives for others to batch with it (microseconds)", NULL },
    { "precision", PIPE_P_STRING, "fp16", 0, 0, "GPU storage: fp16, bf16 or fp32",
      "fp16|bf16|fp32" },
    { "instances", PIPE_P_INT, "1", 1, MAX_INSTANCES,
      "copies of the model; give the node as many workers to run them at once", NULL },
    { "threads", PIPE_P_INT, "0", 0, 256, "CPU threads for the math; 0 = all cores", NULL },
    { NULL, 0, NULL, 0, 0, NULL, NULL },
};

static parley_status bert_node_create(pipe_node *node, void **out)
{
    parley_nlu_params p = parley_nlu_params_default();
    p.device = pipe_node_param_str(node, "device");
    p.precision = pipe_node_param_str(node, "precision");
    p.threads = (int)pipe_node_param_int(node, "threads");
    pipe_node_set_batch(node, (int)pipe_node_param_int(node, "max_batch"),
                        (long)pipe_node_param_int(node, "max_queue_delay_us"));
    bert_state *s = pl_calloc(1, sizeof *s);
    if (!s)
        return pl_nomem(NULL);
    const int n = (int)pipe_node_param_int(node, "instances");
    for (; s->n < n; s->n++) {
        parley_status st = parley_nlu_open(pipe_node_param_str(node, "model"), &p, &s->nlu[s->n]);
        if (st != PARLEY_OK) {
            for (int i = 0; i < s->n; i++)
                parley_nlu_close(s->nlu[i]);
            pl_free(s);
            return st;
        }
    }
    *out = s;
    return PARLEY_OK;
}

static void bert_node_destroy(void *state)
{
    bert_state *s = state;
    for (int i = 0; i < s->n; i++)
        parley_nlu_close(s->nlu[i]);
    pl_free(s);
}

/* The payload of a turn's message: the NLU result and its slots as a turn carries them. */
typedef struct turn_values {
    parley_nlu_result *r;
    parley_slot slots[];
} turn_values;

static void values_free(void *payload)
{
    turn_values *v = payload;
    parley_nlu_result_free(v->r);
    pl_free(v);
}

/* Makes r (taken, freed on failure) the values of m's turn. */
static parley_status set_values(pipe_msg *m, parley_nlu_result *r)
{
    size_t n = (size_t)r->n_slots;
    turn_values *v = pl_malloc(sizeof *v + n * sizeof *v->slots);
    if (!v) {
        parley_nlu_result_free(r);
        return pl_nomem("a turn's NLU result");
    }
    v->r = r;
    for (size_t i = 0; i < n; i++)
        v->slots[i] = (parley_slot){ r->slots[i].slot, r->slots[i].canonical };
    pipe_msg_set_payload(m, PIPE_T_NLU, v, values_free);
    m->intent = r->intent;
    m->confidence = r->confidence;
    m->n_slots = n;
    m->slots = v->slots;
    return PARLEY_OK;
}

static parley_status bert_node_batch(pipe_node *node, void *state, pipe_msg **msgs, size_t n)
{
    bert_state *s = state;
    parley_nlu *nlu = s->nlu[atomic_fetch_add(&s->next, 1) % (unsigned)s->n];
    const char *texts[1024];
    parley_nlu_result *res[1024];
    for (size_t i = 0; i < n; i++)
        texts[i] = msgs[i]->text;
    int64_t t0 = pipe_now_ns();
    parley_status st = parley_nlu_parse_batch(nlu, texts, n, res);
    int64_t dt = pipe_now_ns() - t0;
    for (size_t i = 0; i < n; i++) {
        pipe_msg *m = msgs[i];
        parley_status one = st;
        if (st != PARLEY_OK) {
            int64_t t1 = pipe_now_ns();
            one = parley_nlu_parse(nlu, texts[i], &res[i]);
            m->nlu_ns = pipe_now_ns() - t1;
            m->nlu_batch = 1;
        } else {
            m->nlu_ns = dt;
            m->nlu_batch = (int)n;
        }
        if (one == PARLEY_OK)
            one = set_values(m, res[i]);
        if (one) {
            pipe_node_fail_turn(node, m, one);
            continue;
        }
        pipe_node_emit(node, 1, m); /* ports[1]: result */
    }
    return PARLEY_OK;
}

const pipe_kind nlu_kind_bert = {
    .name = "nlu.bert",
    .doc = "BERT intent classification and slot tagging, batched across users",
    .ports = ports,
    .params = params,
    .workers = 1,
    .create = bert_node_create,
    .process_batch = bert_node_batch,
    .destroy = bert_node_destroy,
};
