/* graph_load.c — the pipeline graph YAML loader: from a file to checked, linked nodes.
 *
 * It checks everything a graph can get wrong before any thread starts, and names the
 * place with FILE:LINE:COL (through sdk/base/yaml_doc.h): unknown keys, duplicate node
 * names, unknown kinds, unknown/ill-typed/out-of-range/missing params, unknown ports,
 * links between ports of different types, required inputs left unlinked, and cycles.
 * Then it orders the nodes so every link goes forward and calls each kind's create().
 * It starts no thread and moves no message: that is pipeline/graph.c.
 *
 * Format (docs/pipelines.md, "A graph file"):
 *   name: pizza
 *   nodes:
 *     - { name: nlu, kind: nlu.bert, inputs: { text: [in.text, asr.text] },
 *         params: { model: models/pizza }, workers: 1 }
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/graph_impl.h"
#include "sdk/base/alloc.h"
#include "sdk/base/sync.h"
#include "sdk/base/yaml_doc.h"

typedef struct edge {
    size_t from, to;    /* node indices */
    const yd_node *ref; /* the "node.port" scalar that made it */
} edge;

typedef struct load {
    pipe_graph *g;
    const char *const *set;        /* --set overrides, or NULL */
    const pipe_kind *const *kinds; /* what a node may be, NULL-terminated */
    unsigned char *used;           /* which of them matched a param */
    const yd_node **decl;          /* (n_nodes) each node's mapping */
    edge *edges;
    size_t n_edges;
} load;

/* The param of kind k (n of them) nearest to a mistyped `word` (yd_nearest), or NULL. */
static const char *nearest_param(const pipe_kind *k, size_t n, const char *word)
{
    const char *names[128];
    if (n > sizeof names / sizeof names[0])
        n = sizeof names / sizeof names[0];
    for (size_t i = 0; i < n; i++)
        names[i] = k->params[i].name;
    return yd_nearest(word, names, n);
}

/* "; did you mean 'X'?" for a near name, else "", in buf. */
static const char *did_you_mean(const char *near, char *buf, size_t cap)
{
    if (!near)
        return "";
    snprintf(buf, cap, "; did you mean '%s'?", near);
    return buf;
}

static int port_index(const pipe_kind *k, const char *name, size_t len, pipe_dir dir)
{
    for (int i = 0; k->ports[i].name; i++)
        if (k->ports[i].dir == dir && strlen(k->ports[i].name) == len &&
            !memcmp(k->ports[i].name, name, len))
            return i;
    return -1;
}

static size_t count_ports(const pipe_kind *k)
{
    size_t n = 0;
    while (k->ports[n].name)
        n++;
    return n;
}

static size_t count_params(const pipe_kind *k)
{
    size_t n = 0;
    while (k->params && k->params[n].name)
        n++;
    return n;
}

/* "a, b, c" of the ports of direction dir (or of the params when params != 0). */
static void name_list(const pipe_kind *k, int params, pipe_dir dir, char *buf, size_t cap)
{
    buf[0] = 0;
    size_t used = 0;
    for (size_t i = 0;; i++) {
        const char *n;
        if (params) {
            if (!k->params || !k->params[i].name)
                break;
            n = k->params[i].name;
        } else {
            if (!k->ports[i].name)
                break;
            if (k->ports[i].dir != dir)
                continue;
            n = k->ports[i].name;
        }
        int w = snprintf(buf + used, cap - used, "%s%s", used ? ", " : "", n);
        if (w < 0 || (size_t)w >= cap - used)
            break;
        used += (size_t)w;
    }
    if (!used)
        snprintf(buf, cap, "none");
}

static parley_status resolve_path(const pipe_graph *g, const char *v, char **out)
{
    /* A URI (a database's "postgresql://...") is not a file: it is left as written. */
    if (!v[0] || v[0] == '/' || !strcmp(v, "-") || !g->dir || strstr(v, "://")) {
        *out = pl_strdup(v);
    } else {
        size_t n = strlen(g->dir) + strlen(v) + 2;
        *out = pl_malloc(n);
        if (*out)
            snprintf(*out, n, "%s/%s", g->dir, v);
    }
    return *out ? PARLEY_OK : pl_nomem(NULL);
}

/* Whether `value` is one of `choices` (pipe_param_spec.choices). */
static int is_choice(const char *choices, const char *value)
{
    size_t len = strlen(value);
    for (const char *c = choices;; c++) {
        size_t n = strcspn(c, "|");
        if (n == len && !memcmp(c, value, n))
            return 1;
        /* "prefix:N": the prefix, then one or more digits */
        if (n >= 2 && !memcmp(c + n - 2, ":N", 2) && len > n - 1 && !memcmp(c, value, n - 1) &&
            strspn(value + n - 1, "0123456789") == len - (n - 1))
            return 1;
        c += n;
        if (!*c)
            return 0;
    }
}

/* Fails at v unless string param ps may take `value`; the message lists the choices. */
static parley_status check_choice(const pipe_param_spec *ps, const yd_node *v, const char *value)
{
    if (!ps->choices || is_choice(ps->choices, value))
        return PARLEY_OK;
    char list[256] = "";
    size_t n = 0;
    for (const char *c = ps->choices; *c && n + 3 < sizeof list; c++)
        n += (size_t)snprintf(list + n, sizeof list - n, *c == '|' ? ", " : "%c", *c);
    return yd_fail(v, PARLEY_ERR_CONFIG, "param '%s': '%s' is not one of: %s", ps->name, value,
                   list);
}

/* Sets one param value from YAML node v (checked) or, when v is NULL, from the default.
 * Relative paths are resolved from the graph's folder, except an override's (cli = 1),
 * which is relative to where the command runs. */
static parley_status set_param(pipe_node *nd, size_t i, const yd_node *v, int cli)
{
    const pipe_param_spec *ps = &nd->kind->params[i];
    pipe_pval *pv = &nd->params[i];
    parley_status st = PARLEY_OK;
    const char *text = ps->def;
    if (v) {
        switch (ps->type) {
        case PIPE_P_STRING:
            if ((st = yd_str(v, &text)) == PARLEY_OK)
                st = check_choice(ps, v, text);
            break;
        case PIPE_P_PATH: st = yd_str(v, &text); break;
        case PIPE_P_INT:
            st = yd_int(v, (long long)ps->lo, (long long)ps->hi, &pv->i);
            pv->d = (double)pv->i;
            return st;
        case PIPE_P_DOUBLE: return yd_double(v, ps->lo, ps->hi, &pv->d);
        case PIPE_P_BOOL: return yd_bool(v, &pv->b);
        }
        if (st != PARLEY_OK)
            return st;
    }
    switch (ps->type) {
    case PIPE_P_STRING: break;
    case PIPE_P_PATH:
        if (cli)
            break;
        return resolve_path(nd->g, text, &pv->s);
    case PIPE_P_INT:
        pv->i = strtoll(text, NULL, 10);
        pv->d = (double)pv->i;
        return PARLEY_OK;
    case PIPE_P_DOUBLE: pv->d = strtod(text, NULL); return PARLEY_OK;
    case PIPE_P_BOOL: pv->b = !strcmp(text, "true"); return PARLEY_OK;
    }
    pv->s = pl_strdup(text);
    return pv->s ? PARLEY_OK : pl_nomem(NULL);
}

/* The override for param `pname` of nd into *value (NULL when there is none), marked
 * used. Two overrides of one param (by the node's name or its kind) are an error naming
 * both: which one was meant cannot be guessed. */
static parley_status find_override(load *L, const pipe_node *nd, const char *pname,
                                   const char **value)
{
    size_t found = 0;
    *value = NULL;
    for (size_t i = 0; L->set && L->set[i]; i++) {
        const char *eq = strchr(L->set[i], '='), *dot;
        if (!eq)
            continue;
        for (dot = eq; dot > L->set[i] && *dot != '.'; dot--) {
        }
        size_t tlen = (size_t)(dot - L->set[i]), plen = (size_t)(eq - dot - 1);
        if (*dot != '.' || plen != strlen(pname) || memcmp(dot + 1, pname, plen))
            continue;
        if ((strlen(nd->name) == tlen && !memcmp(nd->name, L->set[i], tlen)) ||
            (strlen(nd->kind->name) == tlen && !memcmp(nd->kind->name, L->set[i], tlen))) {
            if (*value)
                return pl_fail(PARLEY_ERR_CONFIG,
                               "--set %s and --set %s both set param '%s' of node '%s': give "
                               "it once",
                               L->set[found], L->set[i], pname, nd->name);
            L->used[i] = 1;
            found = i;
            *value = eq + 1;
        }
    }
    return PARLEY_OK;
}

/* Sets param i from an override's text, checked like YAML (errors name the override). */
static parley_status set_override(pipe_node *nd, size_t i, const char *value)
{
    char name[256];
    yd_doc *doc = NULL;
    snprintf(name, sizeof name, "--set %s.%s", nd->name, nd->kind->params[i].name);
    parley_status st = yd_parse_string(name, value, strlen(value), &doc);
    const yd_node *v = doc ? yd_root(doc) : NULL;
    if (st == PARLEY_OK && !v)
        st = pl_fail(PARLEY_ERR_CONFIG, "%s: empty value", name);
    if (st == PARLEY_OK)
        st = set_param(nd, i, v, 1);
    yd_free(doc);
    return st;
}

static parley_status load_params(load *L, pipe_node *nd, const yd_node *decl)
{
    const yd_node *pm = yd_get(decl, "params");
    parley_status st;
    if (pm && !yd_is_null(pm) && (st = yd_expect(pm, YD_MAP, "params")) != PARLEY_OK)
        return st;
    if (pm && pm->kind == YD_MAP) {
        for (size_t j = 0; j < pm->n; j++) {
            size_t i = 0;
            while (i < nd->n_params && strcmp(nd->kind->params[i].name, pm->keys[j]->str))
                i++;
            if (i == nd->n_params) {
                char known[512], near[160];
                name_list(nd->kind, 1, PIPE_IN, known, sizeof known);
                return yd_fail(pm->keys[j], PARLEY_ERR_CONFIG,
                               "unknown param '%s' for node kind '%s' (params: %s)%s",
                               pm->keys[j]->str, nd->kind->name, known,
                               did_you_mean(nearest_param(nd->kind, nd->n_params, pm->keys[j]->str),
                                            near, sizeof near));
            }
        }
    }
    for (size_t i = 0; i < nd->n_params; i++) {
        const pipe_param_spec *ps = &nd->kind->params[i];
        const yd_node *v = pm && pm->kind == YD_MAP ? yd_get(pm, ps->name) : NULL;
        const char *over;
        if ((st = find_override(L, nd, ps->name, &over)) != PARLEY_OK)
            return st;
        if (over) {
            if ((st = set_override(nd, i, over)) != PARLEY_OK)
                return st;
            continue;
        }
        if (!v && !ps->def)
            return yd_fail(decl, PARLEY_ERR_CONFIG, "node '%s' (%s) needs param '%s': %s", nd->name,
                           nd->kind->name, ps->name, ps->doc);
        if ((st = set_param(nd, i, v, 0)) != PARLEY_OK)
            return st;
    }
    return PARLEY_OK;
}

static parley_status add_node(load *L, size_t idx, const yd_node *decl)
{
    static const char *const keys[] = { "name", "kind", "inputs", "params", "workers", NULL };
    pipe_graph *g = L->g;
    const yd_node *nn, *kn, *wn;
    const char *name, *kind;
    parley_status st;
    if ((st = yd_expect(decl, YD_MAP, "a node")) != PARLEY_OK ||
        (st = yd_check_keys(decl, keys)) != PARLEY_OK ||
        (st = yd_require(decl, "name", &nn)) != PARLEY_OK ||
        (st = yd_str(nn, &name)) != PARLEY_OK ||
        (st = yd_require(decl, "kind", &kn)) != PARLEY_OK || (st = yd_str(kn, &kind)) != PARLEY_OK)
        return st;
    if (!name[0] || strchr(name, '.'))
        return yd_fail(nn, PARLEY_ERR_CONFIG, "node name '%s' must be non-empty without '.'", name);
    for (size_t i = 0; i < idx; i++)
        if (!strcmp(g->nodes[i]->name, name)) {
            const yd_node *first = yd_get(L->decl[i], "name");
            return yd_fail(nn, PARLEY_ERR_CONFIG, "duplicate node name '%s' (first at line %d)",
                           name, first->line);
        }
    const pipe_kind *k = L->kinds[0];
    for (size_t i = 1; k && strcmp(k->name, kind); i++)
        k = L->kinds[i];
    if (!k) {
        size_t n = 0;
        const char *names[256];
        for (; L->kinds[n] && n < sizeof names / sizeof names[0]; n++)
            names[n] = L->kinds[n]->name;
        char near[160];
        return yd_fail(kn, PARLEY_ERR_NOT_FOUND,
                       "unknown node kind '%s' (`parley inspect` lists them)%s", kind,
                       did_you_mean(yd_nearest(kind, names, n), near, sizeof near));
    }
    pipe_node *nd = pl_calloc(1, sizeof *nd);
    if (!nd)
        return pl_nomem(NULL);
    g->nodes[idx] = nd;
    L->decl[idx] = decl;
    nd->g = g;
    nd->kind = k;
    nd->workers = k->workers > 0 ? k->workers : 1;
    nd->max_batch = 1;
    nd->n_ports = count_ports(k);
    nd->n_params = count_params(k);
    nd->name = pl_strdup(name);
    nd->outs = pl_calloc(nd->n_ports ? nd->n_ports : 1, sizeof *nd->outs);
    nd->params = pl_calloc(nd->n_params ? nd->n_params : 1, sizeof *nd->params);
    if (!nd->name || !nd->outs || !nd->params)
        return pl_nomem(NULL);
    if ((wn = yd_get(decl, "workers"))) {
        long long w;
        if ((st = yd_int(wn, 1, 64, &w)) != PARLEY_OK)
            return st;
        nd->workers = (int)w;
    }
    return load_params(L, nd, decl);
}

static parley_status add_out(pipe_node *from, int port, pipe_node *to, int in_port)
{
    pipe_out *o = &from->outs[port];
    pipe_target *t = pl_realloc(o->t, (o->n + 1) * sizeof *t);
    if (!t)
        return pl_nomem(NULL);
    o->t = t;
    t[o->n++] = (pipe_target){ to, in_port };
    return PARLEY_OK;
}

/* One "node.port" reference feeding input `in_port` of node `to`. */
static parley_status add_link(load *L, size_t to, int in_port, const yd_node *ref)
{
    pipe_graph *g = L->g;
    pipe_node *dst = g->nodes[to];
    const char *s;
    parley_status st;
    if ((st = yd_str(ref, &s)) != PARLEY_OK)
        return st;
    const char *dot = strchr(s, '.');
    if (!dot || dot == s || !dot[1])
        return yd_fail(ref, PARLEY_ERR_CONFIG, "a link is written NODE.PORT, not '%s'", s);
    size_t from = 0;
    while (from < g->n_nodes && (strlen(g->nodes[from]->name) != (size_t)(dot - s) ||
                                 memcmp(g->nodes[from]->name, s, (size_t)(dot - s))))
        from++;
    if (from == g->n_nodes) {
        char name[128], near[160];
        snprintf(name, sizeof name, "%.*s", (int)(dot - s), s);
        const char **names = pl_malloc((g->n_nodes ? g->n_nodes : 1) * sizeof *names);
        for (size_t i = 0; names && i < g->n_nodes; i++)
            names[i] = g->nodes[i]->name;
        parley_status st = yd_fail(ref, PARLEY_ERR_NOT_FOUND, "link '%s': no node named '%.*s'%s",
                                   s, (int)(dot - s), s,
                                   did_you_mean(names ? yd_nearest(name, names, g->n_nodes) : NULL,
                                                near, sizeof near));
        pl_free(names);
        return st;
    }
    pipe_node *src = g->nodes[from];
    int op = port_index(src->kind, dot + 1, strlen(dot + 1), PIPE_OUT);
    if (op < 0) {
        char known[256];
        name_list(src->kind, 0, PIPE_OUT, known, sizeof known);
        return yd_fail_at(ref, (size_t)(dot + 1 - s), PARLEY_ERR_NOT_FOUND,
                          "unknown output port '%s' of node '%s' (%s; outputs: %s)", dot + 1,
                          src->name, src->kind->name, known);
    }
    const pipe_port_spec *out = &src->kind->ports[op], *in = &dst->kind->ports[in_port];
    if (!(out->types & in->types))
        return yd_fail(ref, PARLEY_ERR_CONFIG, "type mismatch: %s.%s gives %s but %s.%s takes %s",
                       src->name, out->name, pipe_type_name(out->types), dst->name, in->name,
                       pipe_type_name(in->types));
    edge *e = pl_realloc(L->edges, (L->n_edges + 1) * sizeof *e);
    if (!e)
        return pl_nomem(NULL);
    L->edges = e;
    e[L->n_edges++] = (edge){ from, to, ref };
    return add_out(src, op, dst, in_port);
}

static parley_status link_inputs(load *L, size_t to)
{
    pipe_node *nd = L->g->nodes[to];
    const yd_node *in = yd_get(L->decl[to], "inputs");
    parley_status st;
    int linked[64] = { 0 };
    if (in && !yd_is_null(in)) {
        if ((st = yd_expect(in, YD_MAP, "inputs")) != PARLEY_OK)
            return st;
        for (size_t j = 0; j < in->n; j++) {
            const yd_node *key = in->keys[j], *v = in->items[j];
            int p = port_index(nd->kind, key->str, key->len, PIPE_IN);
            if (p < 0) {
                char known[256];
                name_list(nd->kind, 0, PIPE_IN, known, sizeof known);
                return yd_fail(key, PARLEY_ERR_NOT_FOUND,
                               "unknown input port '%s' of node '%s' (%s; inputs: %s)", key->str,
                               nd->name, nd->kind->name, known);
            }
            if (v->kind == YD_SEQ) {
                for (size_t r = 0; r < v->n; r++)
                    if ((st = add_link(L, to, p, v->items[r])) != PARLEY_OK)
                        return st;
                linked[p] |= v->n > 0;
            } else {
                if ((st = add_link(L, to, p, v)) != PARLEY_OK)
                    return st;
                linked[p] = 1;
            }
        }
    }
    for (int p = 0; nd->kind->ports[p].name; p++)
        if (nd->kind->ports[p].dir == PIPE_IN && nd->kind->ports[p].required && !linked[p])
            return yd_fail(L->decl[to], PARLEY_ERR_CONFIG,
                           "node '%s' (%s): required input '%s' is not linked", nd->name,
                           nd->kind->name, nd->kind->ports[p].name);
    return PARLEY_OK;
}

/* Depth-first search for a cycle; on finding one, fails at the link that closes it. */
static parley_status visit(load *L, size_t v, int *color, size_t *order, size_t *n_order)
{
    color[v] = 1;
    for (size_t e = 0; e < L->n_edges; e++) {
        if (L->edges[e].from != v)
            continue;
        size_t w = L->edges[e].to;
        if (L->g->nodes[w]->kind->ends_turns)
            continue; /* a turn ends there: no loop, even when the node also starts turns */
        if (color[w] == 1)
            return yd_fail(L->edges[e].ref, PARLEY_ERR_CONFIG,
                           "cycle: this link from '%s' into '%s' leads back to '%s'",
                           L->g->nodes[v]->name, L->g->nodes[w]->name, L->g->nodes[v]->name);
        parley_status st;
        if (color[w] == 0 && (st = visit(L, w, color, order, n_order)) != PARLEY_OK)
            return st;
    }
    color[v] = 2;
    order[(*n_order)++] = v;
    return PARLEY_OK;
}

/* Reorders g->nodes so that every link goes from an earlier node to a later one. */
static parley_status order_nodes(load *L)
{
    pipe_graph *g = L->g;
    int *color = pl_calloc(g->n_nodes, sizeof *color);
    size_t *order = pl_calloc(g->n_nodes, sizeof *order);
    pipe_node **sorted = pl_calloc(g->n_nodes, sizeof *sorted);
    parley_status st = PARLEY_OK;
    size_t n = 0;
    if (!color || !order || !sorted) {
        st = pl_nomem(NULL);
        goto done;
    }
    for (size_t v = 0; v < g->n_nodes && st == PARLEY_OK; v++)
        if (!color[v])
            st = visit(L, v, color, order, &n);
    if (st == PARLEY_OK) {
        for (size_t i = 0; i < n; i++)
            sorted[i] = g->nodes[order[n - 1 - i]];
        memcpy(g->nodes, sorted, n * sizeof *sorted);
    }
done:
    pl_free(color);
    pl_free(order);
    pl_free(sorted);
    return st;
}

/* A graph must answer its turns: some node must end them (a kind with no outputs, such as
 * text.stdout, or one that ends_turns, such as api). */
static parley_status check_has_output(const pipe_graph *g, const yd_node *nodes)
{
    for (size_t i = 0; i < g->n_nodes; i++) {
        const pipe_kind *k = g->nodes[i]->kind;
        int outs = 0;
        for (const pipe_port_spec *ps = k->ports; ps && ps->name; ps++)
            outs += ps->dir == PIPE_OUT;
        if (k->ends_turns || !outs)
            return PARLEY_OK;
    }
    return yd_fail(nodes, PARLEY_ERR_CONFIG,
                   "the graph has no output, so no turn would be answered: add a text.stdout "
                   "node (or an api node) linked to the last node's output");
}

static parley_status create_nodes(pipe_graph *g)
{
    for (size_t i = 0; i < g->n_nodes; i++) {
        pipe_node *nd = g->nodes[i];
        parley_status st = nd->kind->create ? nd->kind->create(nd, &nd->state) : PARLEY_OK;
        if (st != PARLEY_OK)
            return pl_wrap(st, "node '%s' (%s)", nd->name, nd->kind->name);
        nd->created = 1;
    }
    return PARLEY_OK;
}

static parley_status set_dir(pipe_graph *g, const char *path)
{
    const char *slash = strrchr(path, '/');
    g->dir = slash ? pl_strndup(path, (size_t)(slash - path + (slash == path))) : pl_strdup(".");
    return g->dir ? PARLEY_OK : pl_nomem(NULL);
}

parley_status pipe_graph_build(const char *path, const pipe_graph_opts *opts, int create,
                               pipe_graph **out)
{
    static const char *const top_keys[] = { "name", "nodes", NULL };
    yd_doc *doc = NULL;
    load L = { 0 };
    const yd_node *root, *nodes;
    parley_status st;
    *out = NULL;
    if ((st = yd_parse_file(path, &doc)) != PARLEY_OK)
        return st;
    root = yd_root(doc);
    if (!root) {
        st = pl_fail(PARLEY_ERR_CONFIG, "%s: the graph file is empty", path);
        goto fail;
    }
    if ((st = yd_expect(root, YD_MAP, "a pipeline graph")) != PARLEY_OK ||
        (st = yd_check_keys(root, top_keys)) != PARLEY_OK ||
        (st = yd_require(root, "nodes", &nodes)) != PARLEY_OK ||
        (st = yd_expect(nodes, YD_SEQ, "nodes")) != PARLEY_OK)
        goto fail;
    if (!nodes->n) {
        st = yd_fail(nodes, PARLEY_ERR_CONFIG, "the graph has no nodes");
        goto fail;
    }
    pipe_graph *g = pl_calloc(1, sizeof *g);
    if (!g) {
        st = pl_nomem("%s: the graph", path);
        goto fail;
    }
    if ((st = pl_mutex_init(&g->mu, path)) != PARLEY_OK) {
        pl_free(g);
        goto fail;
    }
    if ((st = pl_cond_init(&g->idle, path)) != PARLEY_OK) {
        pthread_mutex_destroy(&g->mu);
        pl_free(g);
        goto fail;
    }
    L.g = g;
    if ((st = pipe_metrics_new(&g->metrics)) != PARLEY_OK ||
        (st = pipe_hint_board_new(&g->hints)) != PARLEY_OK ||
        (st = pipe_metrics_engine_init(g)) != PARLEY_OK)
        goto fail;
    size_t n_set = 0;
    while (opts->set && opts->set[n_set])
        n_set++;
    L.set = opts->set;
    L.kinds = opts->kinds;
    if (!(g->nodes = pl_calloc(nodes->n, sizeof *g->nodes)) ||
        !(L.used = pl_calloc(n_set + 1, 1)) || !(L.decl = pl_calloc(nodes->n, sizeof *L.decl))) {
        st = pl_nomem(NULL);
        goto fail;
    }
    g->n_nodes = nodes->n;
    g->queue_size = opts->queue_size ? opts->queue_size : 64;
    if ((st = set_dir(g, path)) != PARLEY_OK)
        goto fail;
    for (size_t i = 0; i < nodes->n; i++)
        if ((st = add_node(&L, i, nodes->items[i])) != PARLEY_OK) {
            g->n_nodes = i + 1;
            goto fail;
        }
    for (size_t i = 0; i < n_set; i++)
        if (!L.used[i]) {
            st = pl_fail(PARLEY_ERR_NOT_FOUND,
                         "--set %s: expected NODE.PARAM=VALUE or KIND.PARAM=VALUE naming a "
                         "node (or kind) of the graph and one of its params",
                         L.set[i]);
            goto fail;
        }
    for (size_t i = 0; i < g->n_nodes; i++)
        if ((st = link_inputs(&L, i)) != PARLEY_OK)
            goto fail;
    if ((st = order_nodes(&L)) != PARLEY_OK ||
        (opts->need_output && (st = check_has_output(g, nodes)) != PARLEY_OK))
        goto fail;
    if (create && (st = create_nodes(g)) != PARLEY_OK)
        goto fail;
    pl_free(L.decl);
    pl_free(L.edges);
    pl_free(L.used);
    yd_free(doc);
    *out = g;
    return PARLEY_OK;
fail:
    if (L.g) {
        /* Nodes past a failed add_node were never made. */
        size_t n = 0;
        while (n < L.g->n_nodes && L.g->nodes && L.g->nodes[n])
            n++;
        L.g->n_nodes = n;
        pipe_graph_free(L.g);
    }
    pl_free(L.decl);
    pl_free(L.edges);
    pl_free(L.used);
    yd_free(doc);
    return st;
}
