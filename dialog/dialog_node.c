/* dialog_node.c — the `dialog.frames` node: the dialog manager inside a pipeline graph.
 *
 * Each turn arrives with its NLU result; the node hands intent, confidence and entities to
 * dm_turn() and sends the same message on as a reply, with the session and turn ids, the
 * intent acted on and the user's slots after the turn. The engine sends every turn of a
 * user to the same worker, which is the serialization dm_turn() asks of its caller.
 * With `model:` set, the domain is checked against that NLU model's labels at start-up.
 * The dialog itself is dialog.c and policy.c; this file only adapts it to the graph.
 */
#include <stdio.h>
#include <string.h>

#include "dialog/dialog.h"
#include "parley/nlu.h"
#include "pipeline/node.h"
#include "sdk/base/alloc.h"

static const pipe_port_spec ports[] = {
    { "nlu", PIPE_IN, PIPE_T_NLU, 1, "the user's text with its intent and slots" },
    { "reply", PIPE_OUT, PIPE_T_REPLY, 0,
      "the reply, with the intent acted on and the user's slots" },
    { NULL, 0, 0, 0, NULL },
};

static const pipe_param_spec params[] = {
    { "domain", PIPE_P_PATH, NULL, 0, 0, "domain.yaml: intents, slots, responses, forms, rules",
      NULL },
    { "store", PIPE_P_PATH, NULL, 0, 0,
      "every user's context: a SQLite file (created if missing) or a postgresql:// URI", NULL },
    { "model", PIPE_P_PATH, "", 0, 0,
      "NLU model directory to check the domain's intents and entities against; empty = the "
      "model of the NLU node linked to its input (none: no check)",
      NULL },
    { "busy_timeout_ms", PIPE_P_INT, "5000", 0, 600000,
      "how long a turn waits for a store another process holds (PostgreSQL: for the user's "
      "lock and for any statement)",
      NULL },
    { "pool_size", PIPE_P_INT, "4", 1, 64, "PostgreSQL connections of this node (SQLite: unused)",
      NULL },
    { NULL, 0, NULL, 0, 0, NULL, NULL },
};

static parley_status frames_create(pipe_node *node, void **state)
{
    dm_params p = {
        .domain_path = pipe_node_param_str(node, "domain"),
        .store_path = pipe_node_param_str(node, "store"),
        .busy_timeout_ms = (int)pipe_node_param_int(node, "busy_timeout_ms"),
        .pool_size = (int)pipe_node_param_int(node, "pool_size"),
    };
    if (p.busy_timeout_ms == 0)
        p.busy_timeout_ms = -1; /* the param's 0 means "do not wait" */
    const char *model = pipe_node_param_str(node, "model");
    if (!model || !*model) /* the model of the NLU node that feeds this one, if any */
        model = pipe_node_upstream_param(node, "model");
    parley_nlu_labels *labels = NULL;
    parley_status st;
    if (model && *model) {
        if ((st = parley_nlu_labels_read(model, &labels)) != PARLEY_OK)
            return pl_wrap(st, "node %s: checking the domain against model %s",
                           pipe_node_name(node), model);
        p.known_intents = labels->intents;
        p.n_known_intents = (size_t)labels->n_intents;
        p.known_slots = labels->entities;
        p.n_known_slots = (size_t)labels->n_entities;
    }
    st = dm_open(&p, (dm_manager **)state);
    parley_nlu_labels_free(labels);
    return st != PARLEY_OK ? pl_wrap(st, "node %s", pipe_node_name(node)) : PARLEY_OK;
}

static void frames_destroy(void *state)
{
    dm_close(state);
}

/* Moves the turn's result into the message (pipe_slot and dm_slot have the same fields). */
static parley_status to_msg(pipe_msg *m, dm_turn_out *o)
{
    pipe_slot *slots = pl_calloc(o->n_slots ? o->n_slots : 1, sizeof *slots);
    if (!slots)
        return pl_nomem("a reply");
    for (size_t i = 0; i < o->n_slots; i++) {
        slots[i].name = o->slots[i].name;
        slots[i].value = o->slots[i].value;
        o->slots[i] = (dm_slot){ NULL, NULL };
    }
    pl_free(m->session_id);
    pl_free(m->reply);
    pl_free(m->intent);
    for (size_t i = 0; i < m->n_slots; i++) {
        pl_free(m->slots[i].name);
        pl_free(m->slots[i].value);
    }
    pl_free(m->slots);
    m->session_id = o->session_id;
    m->reply = o->reply;
    m->intent = o->intent;
    o->session_id = o->reply = o->intent = NULL;
    m->turn_id = o->turn_id;
    m->store_ns = o->store_ns;
    m->confidence = o->confidence;
    m->slots = slots;
    m->n_slots = o->n_slots;
    m->type = PIPE_T_REPLY;
    return PARLEY_OK;
}

static parley_status frames_process(pipe_node *node, void *state, int port, pipe_msg *msg)
{
    (void)port;
    const parley_nlu_result *r = msg->nlu;
    size_t n = r && r->n_slots > 0 ? (size_t)r->n_slots : 0;
    dm_entity *ents = pl_malloc((n ? n : 1) * sizeof *ents);
    if (!ents) {
        pipe_node_fail_turn(node, msg, pl_nomem("a turn"));
        return PARLEY_OK;
    }
    for (size_t i = 0; i < n; i++)
        ents[i] = (dm_entity){ r->slots[i].slot, r->slots[i].canonical };
    dm_turn_in in = {
        .user_id = msg->user_id,
        .text = msg->text,
        .intent = r ? r->intent : NULL,
        .confidence = r ? r->confidence : 0.0f,
        .n_entities = n,
        .entities = ents,
        .restart = msg->new_session,
    };
    dm_turn_out out;
    int64_t t0 = pipe_now_ns();
    parley_status st = dm_turn(state, &in, &out);
    if (st == PARLEY_OK)
        st = to_msg(msg, &out);
    dm_turn_out_free(&out);
    pl_free(ents);
    msg->dialog_ns = pipe_now_ns() - t0;
    if (st != PARLEY_OK) {
        pipe_node_fail_turn(node, msg, st);
        return PARLEY_OK;
    }
    pipe_node_emit(node, 1, msg); /* ports[1]: reply; on shutdown it frees the turn */
    return PARLEY_OK;
}

static parley_status frames_action(pipe_node *node, void *state, const char *name, pipe_fn fn,
                                   void *user)
{
    (void)node;
    return dm_register_action(state, name, (parley_action_fn)fn, user);
}

const pipe_kind dm_kind_frames = {
    .name = "dialog.frames",
    .doc = "dialog manager: slots, forms, rules and replies from domain.yaml; context in SQLite "
           "or PostgreSQL",
    .ports = ports,
    .params = params,
    .workers = 4,
    .create = frames_create,
    .process = frames_process,
    .action = frames_action,
    .destroy = frames_destroy,
};
