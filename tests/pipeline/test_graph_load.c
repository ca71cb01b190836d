/* test_graph_load.c — the graph loader's checks, one broken graph per error.
 *
 * Each tests/pipeline/graphs/NAME.yaml starts with "# expect: LINE:COL: text" (or "ok"); the
 * loader must fail on it with a message that starts with the file's path and that
 * position and contains that text. Also: --set overrides (good, bad, one param set twice;
 * text.stdin's user param held to the user id rules), relative paths, and an
 * allocation-failure sweep over loading a whole graph.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/graph.h"
#include "sdk/lib/kinds.h"
#include "tests/check.h"
#include "tests/fault.h"

static char dir[1024];

static void check_file(const char *name)
{
    char path[2048], line[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "%s: cannot open", path);
    if (!f)
        return;
    int have = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    CHECK(have && !strncmp(line, "# expect: ", 10), "%s: no '# expect:' first line", name);
    if (!have)
        return;
    char *want = line + 10;
    want[strcspn(want, "\n")] = 0;
    parley_status st = pipe_graph_check(path, lib_kinds);
    if (!strcmp(want, "ok")) {
        CHECK(st == PARLEY_OK, "%s: %s", name, parley_errmsg());
        return;
    }
    /* "LINE:COL: text": the message must be "PATH:LINE:COL: ...text..." */
    char *text = strchr(strchr(want, ':') + 1, ':');
    char prefix[2300];
    snprintf(prefix, sizeof prefix, "%s:%.*s:", path, (int)(text - want), want);
    text += 2;
    const char *msg = parley_errmsg();
    CHECK(st != PARLEY_OK, "%s: loaded, expected an error", name);
    CHECK(!strncmp(msg, prefix, strlen(prefix)), "%s: message '%s' does not start with '%s'", name,
          msg, prefix);
    CHECK(strstr(msg, text) != NULL, "%s: message '%s' lacks '%s'", name, msg, text);
}

static const pipe_graph_opts builtin = { .kinds = lib_kinds };

static void test_sets(void)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/good.yaml", dir);
    const char *good[] = { "out.format=chat", "text.stdin.user=bob", NULL };
    pipe_graph_opts o = { .set = good, .kinds = lib_kinds };
    pipe_graph *g = NULL;
    CHECK(pipe_graph_load(path, &o, &g) == PARLEY_OK, "--set good: %s", parley_errmsg());
    pipe_node *in = g ? pipe_graph_find_kind(g, "text.stdin") : NULL;
    CHECK(in && !strcmp(pipe_node_param_str(in, "user"), "bob"), "--set by kind took");
    pipe_node *out = g ? pipe_graph_find_kind(g, "text.stdout") : NULL;
    CHECK(out && !strcmp(pipe_node_param_str(out, "format"), "chat"), "--set by name took");
    CHECK(out && !pipe_node_param_bool(out, "verbose"), "bool from YAML");
    pipe_graph_close(g);

    const char *unknown[] = { "nosuch.format=chat", NULL };
    o.set = unknown;
    CHECK(pipe_graph_load(path, &o, &g) == PARLEY_ERR_NOT_FOUND && !g, "--set unknown target");
    CHECK(strstr(parley_errmsg(), "--set nosuch.format=chat") != NULL, "%s", parley_errmsg());
    const char *badval[] = { "out.verbose=maybe", NULL };
    o.set = badval;
    CHECK(pipe_graph_load(path, &o, &g) == PARLEY_ERR_CONFIG && !g, "--set ill-typed");
    CHECK(strstr(parley_errmsg(), "--set out.verbose:1:1:") != NULL, "%s", parley_errmsg());

    /* One param set twice, by name twice or by name and kind: an error naming both. */
    const char *twice[] = { "out.format=chat", "out.verbose=true", "out.format=json", NULL };
    o.set = twice;
    CHECK(pipe_graph_load(path, &o, &g) == PARLEY_ERR_CONFIG && !g, "--set twice");
    CHECK(strstr(parley_errmsg(), "--set out.format=chat and --set out.format=json both set "
                                  "param 'format' of node 'out'") != NULL,
          "%s", parley_errmsg());
    const char *name_kind[] = { "text.stdin.user=bob", "in.user=eve", NULL };
    o.set = name_kind;
    CHECK(pipe_graph_load(path, &o, &g) == PARLEY_ERR_CONFIG && !g, "--set by kind and name");
    CHECK(strstr(parley_errmsg(), "text.stdin.user=bob") && strstr(parley_errmsg(), "in.user=eve"),
          "%s", parley_errmsg());
    /* A user id the rules refuse is a config error of text.stdin. */
    const char *bad_user[] = { "in.user=a\tb", NULL };
    o.set = bad_user;
    CHECK(pipe_graph_load(path, &o, &g) == PARLEY_ERR_CONFIG && !g, "--set in.user with a tab");
    CHECK(strstr(parley_errmsg(), "param user: user id: control character U+0009 at byte 1"), "%s",
          parley_errmsg());
    const char *badchoice[] = { "out.format=xml", NULL };
    o.set = badchoice;
    CHECK(pipe_graph_load(path, &o, &g) == PARLEY_ERR_CONFIG && !g, "--set outside the choices");
    CHECK(!strcmp(parley_errmsg(),
                  "--set out.format:1:1: param 'format': 'xml' is not one of: json, chat"),
          "%s", parley_errmsg());
}

static void test_relative(void)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/relative_path.yaml", dir);
    pipe_graph *g = NULL;
    CHECK(pipe_graph_load(path, &builtin, &g) == PARLEY_OK, "relative: %s", parley_errmsg());
    pipe_node *asr = g ? pipe_graph_find_kind(g, "asr.stub") : NULL;
    const char *t = asr ? pipe_node_param_str(asr, "transcripts") : "";
    CHECK(strstr(t, "/graphs/transcripts.txt") != NULL, "resolved to %s", t);
    pipe_graph_close(g);
}

static parley_status load_good(void *ctx)
{
    pipe_graph *g = NULL;
    parley_status st = pipe_graph_load(ctx, &builtin, &g);
    pipe_graph_close(g);
    return st;
}

int main(int argc, char **argv)
{
    snprintf(dir, sizeof dir, "%s", argc > 1 ? argv[1] : "tests/pipeline/graphs");
    DIR *d = opendir(dir);
    CHECK(d != NULL, "cannot open %s", dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len > 5 && !strcmp(e->d_name + len - 5, ".yaml")) {
            check_file(e->d_name);
            n++;
        }
    }
    if (d)
        closedir(d);
    CHECK(n >= 15, "only %d graph files", n);
    test_sets();
    test_relative();
    char path[2048];
    snprintf(path, sizeof path, "%s/relative_path.yaml", dir);
    long points = fault_sweep("load relative_path.yaml", load_good, path);
    CHECK(points > 20, "only %ld allocation points", points);
    return check_done();
}
