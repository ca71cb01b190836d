/* words_nlu.h — `test.nlu`, an NLU node kind without a model, for tests and benchmarks.
 *
 * A turn's text "INTENT [ENTITY=VALUE ...]" is read as its NLU values: the first word is the
 * intent (confidence 1), each ENTITY=VALUE an entity; other words are ignored. It lets a
 * dialog run inside a real graph with exactly the intents and entities a test chooses
 * (tests/dialog/test_action_server.c, bench/action_bench.c). Not a library kind: a program
 * lists `words_nlu` in its own kinds table.
 */
#ifndef TESTS_DIALOG_WORDS_NLU_H
#define TESTS_DIALOG_WORDS_NLU_H

#include <string.h>

#include "pipeline/node.h"
#include "sdk/base/alloc.h"

static const pipe_port_spec words_ports[] = {
    { "text", PIPE_IN, PIPE_T_TEXT, 1, "INTENT [ENTITY=VALUE ...]" },
    { "result", PIPE_OUT, PIPE_T_NLU, 0, "the intent (confidence 1) and the entities" },
    { NULL, 0, 0, 0, NULL },
};

static parley_status words_create(pipe_node *node, void **state)
{
    (void)node;
    *state = NULL;
    return PARLEY_OK;
}

static parley_status words_process(pipe_node *node, void *state, int port, pipe_msg *msg)
{
    (void)state, (void)port;
    size_t len = strlen(msg->text), max = len / 2 + 1;
    parley_slot *slots = pl_calloc(1, max * sizeof *slots + len + 1);
    if (!slots) {
        pipe_node_fail_turn(node, msg, PARLEY_ERR_NOMEM);
        return PARLEY_OK;
    }
    char *words = (char *)(slots + max);
    memcpy(words, msg->text, len + 1);
    pipe_msg_set_payload(msg, PIPE_T_NLU, slots, pl_free);
    msg->confidence = 1.0f;
    for (char *save = NULL, *w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(w, '=');
        if (!msg->intent) {
            msg->intent = w;
        } else if (eq) {
            *eq = '\0';
            slots[msg->n_slots++] = (parley_slot){ w, eq + 1 };
        }
    }
    msg->slots = slots;
    pipe_node_emit(node, 1, msg);
    return PARLEY_OK;
}

static const pipe_kind words_nlu = {
    .name = "test.nlu",
    .doc = "the test's NLU: INTENT [ENTITY=VALUE ...]",
    .ports = words_ports,
    .create = words_create,
    .process = words_process,
};

#endif
