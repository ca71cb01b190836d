/* fuzz_domain.c — libFuzzer target for the dialog domain loader (dialog/domain.c) and the
 * reply templates it checks (dialog/template.c).
 *
 * The input is a domain.yaml. Leading comment lines "# known_intents: a, b" and
 * "# known_entities: x, y" give the NLU model's labels to check against, as the files of
 * tests/dialog/domains/ do (comments, so the YAML is the same). A refusal must carry a
 * message. A domain that loads must hold only cross-references inside its own arrays (the
 * promise that a turn never meets a dangling name), and every response must render
 * strictly. The input's bytes are also rendered as a lenient template (an action's reply),
 * which must never fail except for memory.
 */
#include <string.h>

#include "dialog/template.h"
#include "tests/fuzz/fuzz_input.h"

enum { MAX_KNOWN = 16 };

#define IN(i, n)         ((i) >= 0 && (size_t)(i) < (n))
#define IN_OR_NONE(i, n) ((i) == -1 || IN(i, n))

/* Splits the comment line's list "a, b" (in place) into at most MAX_KNOWN names. */
static size_t split(char *s, const char **out)
{
    size_t n = 0;
    for (char *tok = strtok(s, ", "); tok && n < MAX_KNOWN; tok = strtok(NULL, ", "))
        out[n++] = tok;
    return n;
}

static void check_do(const dm_domain *d, dm_do act)
{
    switch (act.kind) {
    case DM_DO_NONE: break;
    case DM_DO_REPLY: FUZZ_EXPECT(IN(act.index, d->n_responses), "reply %d", act.index); break;
    case DM_DO_FORM: FUZZ_EXPECT(IN(act.index, d->n_forms), "form %d", act.index); break;
    case DM_DO_ACTION: FUZZ_EXPECT(IN(act.index, d->n_actions), "action %d", act.index); break;
    default: FUZZ_EXPECT(0, "unknown rule kind %d", (int)act.kind);
    }
}

static void check_intents(const dm_domain *d, const int *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        FUZZ_EXPECT(IN(list[i], d->n_intents), "intent %d", list[i]);
}

static void check_domain(const dm_domain *d, const uint8_t *data, size_t size)
{
    FUZZ_EXPECT(IN(d->fallback, d->n_responses), "fallback %d", d->fallback);
    FUZZ_EXPECT(d->threshold >= 0 && d->threshold <= 1, "threshold %g", d->threshold);
    FUZZ_EXPECT(d->session_expire_ms >= 0 && d->history_limit >= 0, "session and history");
    for (size_t i = 0; i < d->n_intents; i++)
        check_do(d, d->rule_of_intent[i].act);
    for (size_t i = 0; i < d->n_actions; i++)
        FUZZ_EXPECT(IN_OR_NONE(d->actions[i].reply, d->n_responses), "action %s",
                    d->actions[i].name);
    for (size_t i = 0; i < d->n_slots; i++) {
        const dm_slot_def *s = &d->slots[i];
        FUZZ_EXPECT(s->type != DM_SLOT_CATEGORICAL || s->n_values > 0, "slot %s values", s->name);
        FUZZ_EXPECT(s->type != DM_SLOT_NUMBER || s->min <= s->max, "slot %s range", s->name);
    }
    for (size_t i = 0; i < d->n_forms; i++) {
        const dm_form *f = &d->forms[i];
        for (size_t k = 0; k < f->n_required; k++)
            FUZZ_EXPECT(IN(f->required[k], d->n_slots) && IN(f->ask[k], d->n_responses) &&
                                IN_OR_NONE(f->invalid[k], d->n_responses),
                        "form %s slot %zu", f->name, k);
        FUZZ_EXPECT(f->on_complete.kind == DM_DO_REPLY || f->on_complete.kind == DM_DO_ACTION,
                    "form %s completes with a reply or an action", f->name);
        check_do(d, f->on_complete);
        FUZZ_EXPECT(IN_OR_NONE(f->confirm, d->n_responses) &&
                            IN_OR_NONE(f->on_no, d->n_responses) &&
                            IN_OR_NONE(f->on_cancel, d->n_responses),
                    "form %s responses", f->name);
        check_intents(d, f->yes_intents, f->n_yes);
        check_intents(d, f->no_intents, f->n_no);
        check_intents(d, f->cancel_intents, f->n_cancel);
    }
    /* Every checked template renders strictly, with and without slot values. */
    char **values = calloc(d->n_slots ? d->n_slots : 1, sizeof *values);
    FUZZ_EXPECT(values != NULL, "calloc");
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < d->n_slots; i++)
            values[i] = pass ? d->slots[i].name : NULL;
        for (size_t r = 0; r < d->n_responses; r++) {
            FUZZ_EXPECT(d->responses[r].n_vars > 0, "response %s is empty", d->responses[r].name);
            for (size_t t = 0; t < d->responses[r].n_vars; t++) {
                dm_text out = { 0 };
                parley_status st =
                        dm_template_render(d, d->responses[r].vars[t].text, values, 0, &out);
                FUZZ_EXPECT(st == PARLEY_OK, "response %s: %s", d->responses[r].name,
                            parley_errmsg());
                dm_text_free(&out);
            }
        }
    }
    /* The input as an action's reply: lenient rendering keeps what it cannot resolve. */
    char *text = strndup((const char *)data, size);
    FUZZ_EXPECT(text != NULL, "strndup");
    dm_text out = { 0 };
    parley_status st = dm_template_render(d, text, values, 1, &out);
    FUZZ_EXPECT(st == PARLEY_OK, "lenient render: %s", parley_errmsg());
    dm_text_free(&out);
    free(text);
    free(values);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char line[1024], intents[1024] = "", entities[1024] = "";
    const char *ilist[MAX_KNOWN], *elist[MAX_KNOWN];
    dm_known known = { 0 };
    for (size_t at = 0; at < size && data[at] == '#';) {
        const uint8_t *nl = memchr(data + at, '\n', size - at);
        size_t end = nl ? (size_t)(nl - data) : size, n = end - at;
        snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1),
                 (const char *)data + at);
        if (!strncmp(line, "# known_intents: ", 17) && !known.intents) {
            snprintf(intents, sizeof intents, "%s", line + 17);
            known.n_intents = split(intents, ilist);
            known.intents = ilist;
        } else if (!strncmp(line, "# known_entities: ", 18) && !known.entities) {
            snprintf(entities, sizeof entities, "%s", line + 18);
            known.n_entities = split(entities, elist);
            known.entities = elist;
        }
        at = end + 1;
    }
    dm_domain *d = NULL;
    parley_status st = dm_domain_load(fuzz_write("domain.yaml", data, size), &known, &d);
    if (st == PARLEY_OK) {
        FUZZ_EXPECT(d != NULL, "OK without a domain");
        check_domain(d, data, size);
    } else {
        FUZZ_EXPECT(d == NULL, "a refused domain is not handed out");
        fuzz_expect_refusal(st);
    }
    dm_domain_free(d);
    return 0;
}
