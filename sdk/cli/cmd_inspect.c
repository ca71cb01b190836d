/* cmd_inspect.c — `parley inspect`: the node kinds a graph can use, their ports and params.
 *
 * Three views of the same public description (parley_kind_describe): one line per kind,
 * one kind whole, or every kind whole as Markdown (`--markdown`), which is the page
 * docs/nodes.md holds and a test keeps equal to this output. All through the public
 * parley/pipeline.h; the kinds' tables live with the kinds.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "sdk/cli/cli.h"

static void print_kind(const parley_kind_info *k)
{
    printf("%s — %s\n", k->name, k->doc);
    printf("  ports:\n");
    for (int p = 0; p < k->n_ports; p++) {
        const parley_port_info *ps = &k->ports[p];
        printf("    %-8s %-3s %-12s%s %s\n", ps->name, ps->input ? "in" : "out", ps->types,
               ps->required ? " (required)" : "", ps->doc);
    }
    printf("  params:%s\n", k->n_params ? "" : " none");
    for (int p = 0; p < k->n_params; p++) {
        const parley_param_info *ps = &k->params[p];
        const char *def = ps->default_value;
        char range[64] = "";
        if (ps->has_range)
            snprintf(range, sizeof range, " [%.15g, %.15g]", ps->lo, ps->hi);
        printf("    %-20s %s%s, %s%s — %s\n", ps->name, ps->type, range,
               def ? "default " : "required", def ? (def[0] ? def : "\"\"") : "", ps->doc);
    }
}

/* Writes s as the text of a Markdown table cell: '|' would end the cell. */
static void put_cell(const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", stdout);
        else
            putchar(*s);
    }
}

static void markdown_kind(const parley_kind_info *k)
{
    printf("\n## %s\n\n%s\n\n| port | direction | messages | what |\n| --- | --- | --- | --- |\n",
           k->name, k->doc);
    for (int p = 0; p < k->n_ports; p++) {
        const parley_port_info *ps = &k->ports[p];
        printf("| `%s` | %s | ", ps->name,
               ps->input ? (ps->required ? "in, required" : "in") : "out");
        put_cell(ps->types);
        printf(" | ");
        put_cell(ps->doc);
        printf(" |\n");
    }
    if (!k->n_params) {
        printf("\nNo params.\n");
        return;
    }
    printf("\n| param | type | default | what |\n| --- | --- | --- | --- |\n");
    for (int p = 0; p < k->n_params; p++) {
        const parley_param_info *ps = &k->params[p];
        printf("| `%s` | %s", ps->name, ps->type);
        if (ps->has_range)
            printf(" in [%.15g, %.15g]", ps->lo, ps->hi);
        if (!ps->default_value)
            printf(" | required | ");
        else if (!ps->default_value[0])
            printf(" | `\"\"` | ");
        else {
            printf(" | `");
            put_cell(ps->default_value);
            printf("` | ");
        }
        put_cell(ps->doc);
        printf(" |\n");
    }
}

static int markdown_all(void)
{
    printf("# Node kinds\n\n"
           "The kinds a graph file can name, with their ports and params. This page is the "
           "output of\n`parley inspect --markdown`, and a test keeps it so. How a graph links "
           "nodes: [pipelines.md](pipelines.md).\n");
    const char *name;
    for (size_t i = 0; (name = parley_kind_name(i)); i++) {
        printf("%s[`%s`](#", i ? ", " : "\n", name);
        for (const char *c = name; *c; c++) /* the heading's anchor: what GitHub keeps of it */
            if (isalnum((unsigned char)*c) || *c == '_' || *c == '-')
                putchar(tolower((unsigned char)*c));
        printf(")");
    }
    printf("\n");
    parley_kind_info *k;
    parley_status st;
    for (size_t i = 0; (name = parley_kind_name(i)); i++) {
        if ((st = parley_kind_describe(name, &k)) != PARLEY_OK)
            return cli_fail("inspect", st);
        markdown_kind(k);
        parley_kind_info_free(k);
    }
    return 0;
}

int cmd_inspect(int argc, char **argv)
{
    if (argc > 2 || (argc == 2 && cli_is_help(argv[1]))) {
        FILE *f = argc == 2 && cli_is_help(argv[1]) ? stdout : stderr;
        fprintf(f, "usage: parley inspect [KIND | --markdown]\n\nLists the node kinds a graph "
                   "can use, or one kind's ports and params;\n--markdown writes every kind whole "
                   "as a Markdown page (docs/nodes.md).\n");
        return f == stdout ? 0 : 2;
    }
    if (argc == 2 && !strcmp(argv[1], "--markdown"))
        return markdown_all();
    parley_kind_info *k;
    parley_status st;
    if (argc == 2) {
        if (argv[1][0] == '-') {
            static const char *const names[] = { "--markdown", "--help", NULL };
            return cli_unknown_option("inspect", argv[1], names);
        }
        if ((st = parley_kind_describe(argv[1], &k)) == PARLEY_ERR_NOT_FOUND) {
            fprintf(stderr, "parley inspect: no node kind '%s' (`parley inspect` lists them)\n",
                    argv[1]);
            return 1;
        }
        if (st != PARLEY_OK)
            return cli_fail("inspect", st);
        print_kind(k);
        parley_kind_info_free(k);
        return 0;
    }
    const char *name;
    for (size_t i = 0; (name = parley_kind_name(i)); i++) {
        if ((st = parley_kind_describe(name, &k)) != PARLEY_OK)
            return cli_fail("inspect", st);
        printf("%-14s %s\n", k->name, k->doc);
        parley_kind_info_free(k);
    }
    return 0;
}
