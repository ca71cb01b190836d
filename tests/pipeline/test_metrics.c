/* test_metrics.c — the metrics registry and the graph's state, on the echo graph (api →
 * asr.stub → api, no model).
 *
 * Counters, gauges and histograms updated by 8 threads at once must give exact totals; the
 * rendered text must have one HELP and TYPE per name, escaped help and label values,
 * cumulative buckets whose +Inf equals _count; malformed names and label sets are refused;
 * the state goes STARTING → RUNNING → STOPPING; turns through the running graph show up in
 * the engine's metrics (parley_pipeline_metrics); and allocation failures while rendering
 * are clean.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parley/pipeline.h"
#include "pipeline/graph.h"
#include "pipeline/metrics.h"
#include "sdk/base/alloc.h"
#include "sdk/lib/kinds.h"
#include "tests/check.h"
#include "tests/fault.h"
#include "tests/metrics_text.h"
#include "tests/tmpdir.h"

enum { THREADS = 8, UPDATES = 400000, TURNS = 200 };

static char graph_path[1024], stdin_graph[1024];

static pipe_graph *load(void)
{
    pipe_graph_opts opts = { .kinds = lib_kinds };
    pipe_graph *g = NULL;
    CHECK(pipe_graph_load(graph_path, &opts, &g) == PARLEY_OK, "load: %s", parley_errmsg());
    return g;
}

static int count_of(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

typedef struct shared {
    pthread_barrier_t go; /* the threads start together */
    pipe_counter *c;
    pipe_gauge *g;
    pipe_histogram *h;
} shared;

/* Each update observes 0.5, 1.5, 2.5 or 100 in turn: exact in binary, so sums are exact. */
static void *hammer(void *arg)
{
    static const double values[] = { 0.5, 1.5, 2.5, 100 };
    shared *s = arg;
    pthread_barrier_wait(&s->go);
    for (int i = 0; i < UPDATES; i++) {
        pipe_counter_add(s->c, 1);
        pipe_gauge_add(s->g, i % 2 ? 1.0 : 0.5);
        pipe_histogram_observe(s->h, values[i % 4]);
    }
    return NULL;
}

static void test_concurrent(void)
{
    pipe_graph *g = load();
    if (!g)
        return;
    static const double bounds[] = { 1, 2, 3 };
    shared s = {
        .c = pipe_metrics_counter(g, "parley_test_events_total", "Events", "who=\"t\""),
        .g = pipe_metrics_gauge(g, "parley_test_level", "Level", NULL),
        .h = pipe_metrics_histogram(g, "parley_test_size_bytes", "Sizes", "who=\"t\"", bounds, 3),
    };
    CHECK(s.c && s.g && s.h, "register: %s", parley_errmsg());
    if (!s.c || !s.g || !s.h) {
        pipe_graph_close(g);
        return;
    }
    pthread_t t[THREADS];
    pthread_barrier_init(&s.go, NULL, THREADS);
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, hammer, &s);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&s.go);
    const long total = (long)THREADS * UPDATES, quarter = total / 4;
    CHECK(pipe_counter_get(s.c) == (uint64_t)total, "counter %llu, want %ld",
          (unsigned long long)pipe_counter_get(s.c), total);
    CHECK(pipe_gauge_get(s.g) == 0.75 * (double)total, "gauge %.17g, want %.17g",
          pipe_gauge_get(s.g), 0.75 * (double)total);
    char *text = NULL;
    CHECK(pipe_metrics_render(g, &text, NULL) == PARLEY_OK, "render: %s", parley_errmsg());
    if (text) {
        CHECK(metrics_value(text, "parley_test_events_total{who=\"t\"}") == (double)total, "%s",
              text);
        CHECK(metrics_value(text, "parley_test_level") == 0.75 * (double)total, "gauge line");
        /* Cumulative: <=1 holds the 0.5s, <=2 adds the 1.5s, <=3 the 2.5s, +Inf the 100s. */
        CHECK(metrics_value(text, "parley_test_size_bytes_bucket{who=\"t\",le=\"1\"}") == quarter,
              "le=1");
        CHECK(metrics_value(text, "parley_test_size_bytes_bucket{who=\"t\",le=\"2\"}") ==
                      2 * quarter,
              "le=2");
        CHECK(metrics_value(text, "parley_test_size_bytes_bucket{who=\"t\",le=\"3\"}") ==
                      3 * quarter,
              "le=3");
        CHECK(metrics_value(text, "parley_test_size_bytes_bucket{who=\"t\",le=\"+Inf\"}") == total,
              "+Inf");
        CHECK(metrics_value(text, "parley_test_size_bytes_count{who=\"t\"}") == total, "count");
        CHECK(metrics_value(text, "parley_test_size_bytes_sum{who=\"t\"}") ==
                      104.5 * (double)quarter,
              "sum");
    }
    pl_free(text);
    pipe_graph_close(g);
}

static void test_format(void)
{
    pipe_graph *g = load();
    if (!g)
        return;
    char *lab = pipe_metrics_label("path", "a\"b\\c\nd");
    CHECK(lab && !strcmp(lab, "path=\"a\\\"b\\\\c\\nd\""), "escaped label: %s", lab);
    pipe_counter *c1 = pipe_metrics_counter(g, "parley_test_hits_total", "Hits \\ by\npath", lab);
    pipe_counter *c2 =
            pipe_metrics_counter(g, "parley_test_hits_total", "Hits \\ by\npath", "path=\"/\"");
    pipe_counter *again =
            pipe_metrics_counter(g, "parley_test_hits_total", "Hits \\ by\npath", "path=\"/\"");
    CHECK(c1 && c2 && c1 != c2 && again == c2, "same name and labels give the same counter");
    pipe_gauge *nan = pipe_metrics_gauge(g, "parley_test_odd", "Odd values", "v=\"nan\"");
    pipe_gauge *inf = pipe_metrics_gauge(g, "parley_test_odd", "Odd values", "v=\"inf\"");
    pipe_gauge *tenth = pipe_metrics_gauge(g, "parley_test_odd", "Odd values", "v=\"tenth\"");
    pipe_histogram *lat =
            pipe_metrics_histogram(g, "parley_test_wait_seconds", "Waits", NULL, NULL, 0);
    if (!c1 || !c2 || !nan || !inf || !tenth || !lat) {
        CHECK(0, "register: %s", parley_errmsg());
        pl_free(lab);
        pipe_graph_close(g);
        return;
    }
    pipe_counter_add(c1, 3);
    pipe_gauge_set(nan, 0.0 / 0.0);
    pipe_gauge_set(inf, -1.0 / 0.0);
    pipe_gauge_set(tenth, 0.1);
    pipe_histogram_observe(lat, 0.0001);  /* on the first bound: counted there */
    pipe_histogram_observe(lat, 0.00011); /* the next bucket */
    pipe_histogram_observe(lat, 11);      /* past 10 s: only +Inf */
    char *text = NULL;
    size_t len = 0;
    CHECK(pipe_metrics_render(g, &text, &len) == PARLEY_OK, "render: %s", parley_errmsg());
    if (text) {
        CHECK(len == strlen(text), "length %zu, strlen %zu", len, strlen(text));
        CHECK(strstr(text, "# HELP parley_test_hits_total Hits \\\\ by\\npath\n"
                           "# TYPE parley_test_hits_total counter\n"),
              "help escaped, then type:\n%s", text);
        CHECK(count_of(text, "# TYPE parley_test_hits_total ") == 1 &&
                      count_of(text, "# HELP parley_test_hits_total ") == 1,
              "one HELP and TYPE per name");
        CHECK(metrics_value(text, "parley_test_hits_total{path=\"a\\\"b\\\\c\\nd\"}") == 3,
              "escaped series");
        CHECK(metrics_value(text, "parley_test_hits_total{path=\"/\"}") == 0, "zero series");
        CHECK(strstr(text, "parley_test_odd{v=\"nan\"} NaN\n") &&
                      strstr(text, "parley_test_odd{v=\"inf\"} -Inf\n") &&
                      strstr(text, "parley_test_odd{v=\"tenth\"} 0.1\n"),
              "gauge values");
        CHECK(strstr(text, "# TYPE parley_test_wait_seconds histogram\n"
                           "parley_test_wait_seconds_bucket{le=\"0.0001\"} 1\n"
                           "parley_test_wait_seconds_bucket{le=\"0.00025\"} 2\n"),
              "default buckets start at 0.1 ms");
        CHECK(strstr(text, "parley_test_wait_seconds_bucket{le=\"10\"} 2\n"
                           "parley_test_wait_seconds_bucket{le=\"+Inf\"} 3\n"
                           "parley_test_wait_seconds_sum 11.00021\n"
                           "parley_test_wait_seconds_count 3\n"),
              "+Inf, sum and count:\n%s", text);
        CHECK(strstr(text, "# TYPE parley_turns_total counter\n"), "the engine's metrics");
        CHECK(text[len - 1] == '\n', "ends with a newline");
    }
    pl_free(text);
    pl_free(lab);
    pipe_graph_close(g);
}

static void test_refused(void)
{
    static const struct {
        const char *name, *labels;
        int type; /* 0 counter, 1 gauge, 2 histogram */
        const char *why;
    } bad[] = {
        { "test_total", NULL, 0, "must start with 'parley_'" },
        { "parley_a-b_total", NULL, 0, "'-' at 8" },
        { "parley_events", NULL, 0, "ends in '_total'" },
        { "parley_level_total", NULL, 1, "only a counter's" },
        { "parley_x_total", "a=\"b", 0, "no closing quote" },
        { "parley_x_total", "a=\"b\nc\"", 0, "raw newline" },
        { "parley_x_total", "a=\"b\\x\"", 0, "bad escape" },
        { "parley_x_total", "a=b", 0, "expected name=\"value\"" },
        { "parley_x_total", "a=\"b\",", 0, "a ',' ends them" },
        { "parley_x_total", "a=\"b\"c=\"d\"", 0, "expected ','" },
        { "parley_x_total", "le=\"1\"", 0, "reserved" },
        { "parley_x_total", "__name__=\"1\"", 0, "reserved" },
        { "parley_x_total", "a=\"1\",a=\"2\"", 0, "repeated" },
        { "parley_h", "1a=\"1\"", 1, "expected name=\"value\"" },
        { "parley_hist_count", NULL, 1, "clashes" },   /* parley_hist is a histogram below */
        { "parley_gauge_one", NULL, 2, "clashes" },    /* parley_gauge_one_count is a gauge */
        { "parley_gauge_one_count", NULL, 0, "" },     /* as a counter: another type */
        { "parley_gauge_one_count", NULL, 1, "help" }, /* another help */
    };
    pipe_graph *g = load();
    if (!g)
        return;
    CHECK(pipe_metrics_histogram(g, "parley_hist", "H", NULL, NULL, 0) != NULL, "histogram");
    CHECK(pipe_metrics_gauge(g, "parley_gauge_one_count", "G", NULL) != NULL, "gauge");
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *help = !strcmp(bad[i].why, "help") ? "other" : "G";
        void *m =
                bad[i].type == 0 ? (void *)pipe_metrics_counter(g, bad[i].name, help, bad[i].labels)
                : bad[i].type == 1 ? (void *)pipe_metrics_gauge(g, bad[i].name, help, bad[i].labels)
                                   : (void *)pipe_metrics_histogram(g, bad[i].name, help,
                                                                    bad[i].labels, NULL, 0);
        CHECK(!m && strstr(parley_errmsg(), bad[i].why) && strstr(parley_errmsg(), bad[i].name),
              "%s {%s}: refused with '%s', got '%s'", bad[i].name,
              bad[i].labels ? bad[i].labels : "", bad[i].why, m ? "(accepted)" : parley_errmsg());
    }
    static const double down[] = { 1, 0.5 };
    CHECK(!pipe_metrics_histogram(g, "parley_down", "D", NULL, down, 2) &&
                  strstr(parley_errmsg(), "bound 1"),
          "decreasing bounds: %s", parley_errmsg());
    pipe_graph_close(g);
}

static void test_state(void)
{
    pipe_graph *g = load();
    if (!g)
        return;
    CHECK(pipe_graph_get_state(g) == PIPE_STATE_STARTING, "loaded: starting");
    CHECK(pipe_graph_start(g) == PARLEY_OK, "start: %s", parley_errmsg());
    CHECK(pipe_graph_get_state(g) == PIPE_STATE_RUNNING, "started: running");
    pipe_graph_stop(g);
    CHECK(pipe_graph_get_state(g) == PIPE_STATE_STOPPING, "stopped: stopping");
    pipe_graph_close(g);
}

/* Turns through the running echo graph are counted by the engine. */
static void test_engine_counts(void)
{
    parley_pipeline *p = NULL;
    CHECK(parley_pipeline_open(graph_path, NULL, &p) == PARLEY_OK, "open: %s", parley_errmsg());
    if (!p)
        return;
    char user[16];
    for (int i = 0; i < TURNS; i++) {
        snprintf(user, sizeof user, "u%d", i % 7);
        CHECK(parley_pipeline_submit(p, user, "hello", NULL) == PARLEY_OK, "submit");
    }
    for (int i = 0; i < TURNS; i++) {
        parley_reply *r = NULL;
        parley_pipeline_poll(p, -1, &r);
        parley_reply_free(r);
    }
    char *text = metrics_settled(p, TURNS);
    CHECK(text, "metrics: %s", parley_errmsg());
    if (text) {
        CHECK(metrics_value(text, "parley_turns_total{outcome=\"ok\"}") == TURNS, "turns:\n%s",
              text);
        CHECK(metrics_value(text, "parley_turns_total{outcome=\"error\"}") == 0, "no errors");
        CHECK(metrics_value(text, "parley_turn_duration_seconds_count") == TURNS, "latency count");
        CHECK(metrics_value(text, "parley_turn_duration_seconds_sum") > 0, "latency sum");
        CHECK(metrics_value(text, "parley_stage_duration_seconds_count{stage=\"nlu\"}") == 0,
              "no NLU stage in the echo graph");
        CHECK(metrics_value(text, "parley_turns_in_flight") == 0, "nothing in flight");
        CHECK(metrics_value(text, "parley_queue_depth{node=\"asr\"}") == 0 &&
                      metrics_value(text, "parley_queue_capacity{node=\"asr\"}") == 4 * 64,
              "queues of asr (4 workers x 64)");
        CHECK(metrics_value(text, "parley_turn_errors_total{kind=\"invalid_arg\"}") == 0,
              "error kinds are listed at zero");
    }
    parley_metrics_free(text);
    CHECK(parley_pipeline_metrics(NULL, &text, NULL) == PARLEY_ERR_INVALID_ARG, "NULL pipeline");
    parley_pipeline_close(p);
}

/* Lines text.stdin refuses become failed turns, counted by the kind of error. */
static void test_error_kinds(void)
{
    tmpdir_make("metrics");
    const char *input = tmpdir_path("input.txt");
    FILE *f = fopen(input, "w");
    if (!f) {
        CHECK(0, "cannot write %s", input);
        return;
    }
    fputs("hello\nbad \xff byte\n{\"user\": [1]}\n{\"text\": 5}\nbye\nagain\n", f);
    fclose(f);
    char set[600];
    snprintf(set, sizeof set, "in.path=%s", input);
    const char *sets[] = { set, NULL };
    pipe_graph_opts opts = { .set = sets, .kinds = lib_kinds };
    pipe_graph *g = NULL;
    CHECK(pipe_graph_load(stdin_graph, &opts, &g) == PARLEY_OK, "load: %s", parley_errmsg());
    if (g && pipe_graph_start(g) == PARLEY_OK) {
        pipe_graph_wait_sources(g);
        pipe_graph_drain(g);
        char *text = NULL;
        CHECK(pipe_metrics_render(g, &text, NULL) == PARLEY_OK, "render: %s", parley_errmsg());
        if (text) {
            CHECK(metrics_value(text, "parley_turns_total{outcome=\"ok\"}") == 3, "ok:\n%s", text);
            CHECK(metrics_value(text, "parley_turns_total{outcome=\"error\"}") == 3, "errors");
            CHECK(metrics_value(text, "parley_turn_errors_total{kind=\"utf8\"}") == 1, "utf8");
            CHECK(metrics_value(text, "parley_turn_errors_total{kind=\"format\"}") == 2, "format");
            CHECK(metrics_value(text, "parley_turn_duration_seconds_count") == 6,
                  "every turn timed");
        }
        pl_free(text);
    }
    pipe_graph_close(g);
    tmpdir_remove();
}

static parley_status render_once(void *ctx)
{
    char *text = NULL;
    parley_status st = pipe_metrics_render(ctx, &text, NULL);
    pl_free(text);
    return st;
}

int main(int argc, char **argv)
{
    snprintf(graph_path, sizeof graph_path, "%s/echo.yaml",
             argc > 1 ? argv[1] : "tests/pipeline/engine");
    snprintf(stdin_graph, sizeof stdin_graph, "%s/stdin_null.yaml",
             argc > 1 ? argv[1] : "tests/pipeline/engine");
    test_concurrent();
    test_format();
    test_refused();
    test_state();
    test_engine_counts();
    test_error_kinds();
    pipe_graph *g = load();
    if (g) {
        long points = fault_sweep("render", render_once, g);
        CHECK(points >= 1, "render allocates");
        pipe_graph_close(g);
    }
    return check_done();
}
