/* test_action_answer.c — the dialog's side of Rasa's action server protocol, without a network.
 *
 * dm_turn() is given the server's answers itself (dm_turn_in.results), as the dialog.frames
 * node does once its HTTP client has them: the request a turn asks for (every member parley
 * sends, parsed back); the answer applied (slots of each type set, normalized, refused or
 * cleared, unknown slots, responses and event kinds left out, responses by name with
 * variables, Rasa 2's `template`); a failed call and an answer for another action (the
 * action's fallback, or the domain's; no slot changed, nothing stored until the turn ends);
 * an empty answer (the action's reply); a followup that names its own action (10 followups,
 * then the turn ends); dm_action_answer_check on broken answers; allocation failures in the
 * request and in applying an answer.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "dialog/dialog.h"
#include "tests/check.h"
#include "tests/dialog/tmp_store.h"
#include "tests/fault.h"

static char dir[4096], store_path[4200], domain_path[4200];
static dm_manager *dm;

/* One run of a turn of `user` with `intent`, the entities city=`city` (NULL: none) and the
 * answers so far. */
static parley_status run(const char *user, const char *intent, const char *city,
                         const dm_action_result *res, size_t n_res, dm_turn_out *o)
{
    parley_slot e = { "city", city };
    dm_turn_in in = { .user_id = user,
                      .text = "some words",
                      .intent = intent,
                      .confidence = 0.875f,
                      .n_entities = city ? 1 : 0,
                      .entities = &e,
                      .now_ms = 1000000,
                      .n_results = n_res,
                      .results = res };
    return dm_turn(dm, &in, o);
}

static const char *slot(const dm_turn_out *o, const char *name)
{
    for (size_t i = 0; i < o->n_slots; i++)
        if (!strcmp(o->slots[i].name, name))
            return o->slots[i].value;
    return NULL;
}

static const cJSON *at(const cJSON *j, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *save = NULL, *k = strtok_r(buf, ".", &save); j && k; k = strtok_r(NULL, ".", &save))
        j = cJSON_GetObjectItemCaseSensitive(j, k);
    return j;
}

static int str_is(const cJSON *j, const char *path, const char *want)
{
    const cJSON *v = at(j, path);
    return cJSON_IsString(v) && !strcmp(v->valuestring, want);
}

static int has_name(const cJSON *arr, const char *name)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, arr)
    {
        if (cJSON_IsString(e) && !strcmp(e->valuestring, name))
            return 1;
    }
    return 0;
}

static void request(void)
{
    dm_turn_out o;
    parley_status st = run("req", "weather", "Rome", NULL, 0, &o);
    CHECK(st == PARLEY_OK && o.call.action && !strcmp(o.call.action, "action_weather"),
          "a call: %s", parley_errmsg());
    CHECK(!o.reply && o.turn_id == 0 && o.call.now_ms == 1000000, "nothing decided yet");
    CHECK(o.call.url && !strcmp(o.call.url, "http://127.0.0.1:9/webhook"), "url %s", o.call.url);
    cJSON *j = o.call.body ? cJSON_Parse(o.call.body) : NULL;
    CHECK(j, "the request is JSON: %s", o.call.body);
    CHECK(str_is(j, "next_action", "action_weather") && str_is(j, "sender_id", "req") &&
                  str_is(j, "version", PARLEY_VERSION) && str_is(j, "tracker.sender_id", "req") &&
                  str_is(j, "tracker.latest_message.text", "some words") &&
                  str_is(j, "tracker.latest_message.intent.name", "weather") &&
                  str_is(j, "tracker.latest_action_name", "action_listen"),
          "request members: %s", o.call.body);
    const cJSON *conf = at(j, "tracker.latest_message.intent.confidence");
    CHECK(cJSON_IsNumber(conf) && conf->valuedouble == 0.875, "confidence");
    const cJSON *ents = at(j, "tracker.latest_message.entities");
    CHECK(cJSON_GetArraySize(ents) == 1 && str_is(cJSON_GetArrayItem(ents, 0), "entity", "city") &&
                  str_is(cJSON_GetArrayItem(ents, 0), "value", "Rome"),
          "entities");
    const cJSON *slots = at(j, "tracker.slots");
    CHECK(cJSON_GetArraySize(slots) == 4 && cJSON_IsNull(at(slots, "city")) &&
                  cJSON_IsNull(at(slots, "toppings")),
          "every slot, null when unset");
    CHECK(cJSON_IsArray(at(j, "tracker.events")) && cJSON_IsObject(at(j, "tracker.active_loop")),
          "events, active_loop");
    CHECK(has_name(at(j, "domain.intents"), "loop") &&
                  has_name(at(j, "domain.actions"), "action_quiet") &&
                  str_is(at(j, "domain.slots"), "size.type", "categorical") &&
                  has_name(at(j, "domain.slots.size.values"), "large") &&
                  str_is(at(j, "domain.slots"), "toppings.type", "list") &&
                  str_is(cJSON_GetArrayItem(at(j, "domain.responses.utter_weather"), 0), "text",
                         "It is sunny in {city}."),
          "domain: %s", cJSON_PrintUnformatted(at(j, "domain")));
    cJSON_Delete(j);
    dm_turn_out_free(&o);
}

static const char *answer =
        "{\"events\": ["
        "{\"event\": \"slot\", \"name\": \"city\", \"value\": \"Rome\"},"
        "{\"event\": \"slot\", \"name\": \"size\", \"value\": \"LARGE\"},"
        "{\"event\": \"slot\", \"name\": \"toppings\", \"value\": [\"ham\", \"olives\"]},"
        "{\"event\": \"slot\", \"name\": \"count\", \"value\": \"many\"},"
        "{\"event\": \"slot\", \"name\": \"nope\", \"value\": 1},"
        "{\"event\": \"bot\", \"text\": \"left out\"}],"
        "\"responses\": [{\"text\": \"A {city}.\"},"
        "{\"response\": \"utter_weather\", \"city\": \"Oslo\"},"
        "{\"template\": \"utter_weather\"}, {\"response\": \"utter_nope\"}, {}]}";

static void apply(void)
{
    dm_action_result res = { "action_weather", answer };
    dm_turn_out o;
    parley_status st = run("u", "weather", NULL, &res, 1, &o);
    CHECK(st == PARLEY_OK && !o.call.action, "applied: %s", parley_errmsg());
    CHECK(o.reply && !strcmp(o.reply, "A {city}. It is sunny in Oslo. It is sunny in Rome."),
          "reply '%s'", o.reply);
    CHECK(o.turn_id == 1 && slot(&o, "city") && !strcmp(slot(&o, "city"), "Rome") &&
                  slot(&o, "size") && !strcmp(slot(&o, "size"), "large") && slot(&o, "toppings") &&
                  !strcmp(slot(&o, "toppings"), "ham, olives") && !slot(&o, "count"),
          "slots: city %s size %s toppings %s count %s", slot(&o, "city"), slot(&o, "size"),
          slot(&o, "toppings"), slot(&o, "count"));
    dm_turn_out_free(&o);
    /* null clears; a number slot takes a number */
    res.body = "{\"events\": [{\"event\": \"slot\", \"name\": \"city\", \"value\": null},"
               "{\"event\": \"slot\", \"name\": \"count\", \"value\": 3}]}";
    st = run("u", "weather", NULL, &res, 1, &o);
    CHECK(st == PARLEY_OK && !slot(&o, "city") && slot(&o, "count") &&
                  !strcmp(slot(&o, "count"), "3") && !strcmp(o.reply, ""),
          "null, number: %s, reply '%s'", parley_errmsg(), o.reply);
    dm_turn_out_free(&o);
}

static void failures(void)
{
    dm_turn_out o;
    dm_action_result failed = { "action_weather", NULL };
    parley_status st = run("u", "weather", NULL, &failed, 1, &o);
    CHECK(st == PARLEY_OK && !strcmp(o.reply, "No service.") && slot(&o, "size"),
          "failed call: the action's fallback, slots kept: '%s'", o.reply);
    dm_turn_out_free(&o);
    dm_action_result plain = { "action_plain", NULL };
    st = run("u", "plain", NULL, &plain, 1, &o);
    CHECK(st == PARLEY_OK && !strcmp(o.reply, "Sorry?"), "no fallback: the domain's: '%s'",
          o.reply);
    dm_turn_out_free(&o);
    dm_action_result other = { "action_loop", "{}" };
    st = run("u", "plain", NULL, &other, 1, &o);
    CHECK(st == PARLEY_OK && !strcmp(o.reply, "Sorry?"), "an answer for another action: '%s'",
          o.reply);
    dm_turn_out_free(&o);
    dm_action_result quiet = { "action_quiet", "{\"events\": []}" };
    st = run("u", "quiet", NULL, &quiet, 1, &o);
    CHECK(st == PARLEY_OK && !strcmp(o.reply, "Done."), "an empty answer: the reply: '%s'",
          o.reply);
    dm_turn_out_free(&o);
    static const char *const broken[] = {
        "{oops", "[]", "{\"events\": 5}", "{\"events\": [1]}", "{\"responses\": [\"hi\"]}", ""
    };
    for (size_t i = 0; i < sizeof broken / sizeof *broken; i++)
        CHECK(dm_action_answer_check(broken[i]) == PARLEY_ERR_FORMAT, "broken: %s", broken[i]);
    CHECK(dm_action_answer_check("{\"responses\": null}") == PARLEY_OK &&
                  dm_action_answer_check("{}") == PARLEY_OK,
          "empty answers are answers");
}

/* The server names the action itself as its followup every time: 1 + 10 calls, then the turn
 * ends with what was said. */
static void followup_loop(void)
{
    dm_action_result res[16];
    size_t n = 0;
    dm_turn_out o;
    parley_status st;
    while ((st = run("loop", "loop", NULL, res, n, &o)) == PARLEY_OK && o.call.action && n < 16) {
        CHECK(!strcmp(o.call.action, "action_loop"), "call %zu: %s", n, o.call.action);
        res[n++] = (dm_action_result){
            "action_loop", "{\"events\": [{\"event\": \"followup\", \"name\": \"action_loop\"}],"
                           " \"responses\": [{\"text\": \"x\"}]}"
        };
        dm_turn_out_free(&o);
    }
    CHECK(st == PARLEY_OK && n == 11 && o.reply && !strcmp(o.reply, "x x x x x x x x x x x"),
          "%zu calls, reply '%s'", n, o.reply);
    dm_turn_out_free(&o);
}

static parley_status ask_and_apply(void *ctx)
{
    (void)ctx;
    dm_turn_out o;
    parley_status st = run("fault", "weather", "Rome", NULL, 0, &o);
    dm_turn_out_free(&o);
    dm_action_result res = { "action_weather", answer };
    if (st == PARLEY_OK)
        st = run("fault", "weather", "Rome", &res, 1, &o);
    dm_turn_out_free(&o);
    return st;
}

int main(void)
{
    if (!tmp_store_dir(dir, sizeof dir, "action-answer"))
        return 1;
    tmp_store_name(store_path, sizeof store_path, dir, "answer.db");
    snprintf(domain_path, sizeof domain_path, "%s/action_answer_domain.yaml", SRC_DIR);
    dm_params p = { .domain_path = domain_path, .store_path = store_path };
    CHECK(dm_open(&p, &dm) == PARLEY_OK, "open: %s", parley_errmsg());
    if (dm) {
        CHECK(dm_uses_action_servers(dm), "the domain has action servers");
        request();
        apply();
        failures();
        followup_loop();
        long points = fault_sweep("a request, then its answer applied", ask_and_apply, NULL);
        CHECK(points > 50, "only %ld allocation points", points);
        dm_close(dm);
    }
    tmp_store_remove(store_path);
    rmdir(dir);
    return check_done();
}
