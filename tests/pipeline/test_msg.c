/* test_msg.c — a message's payload: freed by the function its node gave, once, when the last
 * message that shares it (the message and its clones) lets go of it; replaced by the next
 * node's payload, the old one let go and the values that pointed into it cleared.
 * The messages here belong to no graph (pipe_msg_clone and pipe_msg_free allow that).
 */
#include <string.h>

#include "pipeline/node.h"
#include "sdk/base/alloc.h"
#include "tests/check.h"

static int freed;

static void count_free(void *payload)
{
    freed++;
    pl_free(payload);
}

int main(void)
{
    pipe_msg *m = pl_calloc(1, sizeof *m);
    parley_slot *s = pl_malloc(sizeof *s);
    CHECK(m && s && (m->user_id = pl_strdup("ann")) && (m->text = pl_strdup("large")),
          "out of memory");
    *s = (parley_slot){ "size", "large" };
    pipe_msg_set_payload(m, PIPE_T_NLU, s, count_free);
    m->intent = "order";
    m->confidence = 0.5f;
    m->slots = s;
    m->n_slots = 1;

    pipe_msg *c1 = pipe_msg_clone(m), *c2 = pipe_msg_clone(m);
    CHECK(c1 && c2 && c2->payload == s && c2->slots == s && c2->n_slots == 1 &&
                  !strcmp(c2->intent, "order") && c2->type == PIPE_T_NLU && c2->text != m->text &&
                  !strcmp(c2->text, "large"),
          "a clone shares the payload and copies the rest");
    pipe_msg_free(m);
    pipe_msg_free(c1);
    CHECK(freed == 0, "freed while a clone reads it (%d)", freed);

    char *reply = pl_strdup("a large one");
    pipe_msg_set_payload(c2, PIPE_T_REPLY, reply, count_free);
    CHECK(freed == 1 && c2->type == PIPE_T_REPLY && c2->payload == reply && !c2->intent &&
                  !c2->slots && c2->n_slots == 0 && c2->confidence == 0,
          "replaced: the last holder frees the old payload (%d) and clears its values", freed);
    pipe_msg_set_payload(c2, PIPE_T_REPLY, "static", NULL);
    CHECK(freed == 2, "the reply freed when replaced (%d)", freed);
    pipe_msg_free(c2);
    CHECK(freed == 2, "a payload without a destroy function is not freed (%d)", freed);
    return check_done();
}
