/* kiosk.c — a kiosk-style program that embeds a whole parley pipeline, no server at all.
 *
 * It shows the application side of parley/pipeline.h: open a graph with an `api` node,
 * register an action the domain may call, submit what the customer types, print the reply
 * that comes back, close. Built against the INSTALLED library:
 *
 *   cc kiosk.c -o kiosk $(pkg-config --cflags --libs parley)
 *   ./kiosk pipeline.yaml [TARGET.PARAM=VALUE]...     (e.g. nlu.model=../../models/pizza)
 *
 * One customer at a time stands at a kiosk, so every turn uses the user id "kiosk"; a
 * line "/next" starts a new customer (a new user id). End with Ctrl-D.
 */
#include <stdio.h>
#include <string.h>

#include <parley/parley.h>

/* An action the domain can name (`action: place_order`); it confirms with the slots. */
static parley_status place_order(const parley_action_ctx *ctx, parley_action_out *out, void *ud)
{
    (void)ctx;
    int *orders = ud;
    char text[512];
    snprintf(text, sizeof text, "Order %d is on its way, thank you!", ++*orders);
    return parley_action_reply(out, text);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: kiosk GRAPH.yaml [TARGET.PARAM=VALUE]...\n");
        return 2;
    }
    parley_pipeline_params pp = parley_pipeline_params_default();
    pp.overrides = (const char *const *)argv + 2; /* argv is NULL-terminated */
    parley_pipeline *p;
    if (parley_pipeline_open(argv[1], &pp, &p) != PARLEY_OK) {
        fprintf(stderr, "kiosk: %s\n", parley_errmsg());
        return 1;
    }
    int orders = 0;
    if (parley_pipeline_register_action(p, "place_order", place_order, &orders) == PARLEY_OK)
        printf("(orders go through the kiosk's place_order action)\n");
    char line[1024], user[32] = "kiosk-1";
    int customer = 1;
    printf("kiosk> Hello! What can I do for you?\n");
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0])
            continue;
        if (!strcmp(line, "/next")) {
            snprintf(user, sizeof user, "kiosk-%d", ++customer);
            printf("kiosk> Next customer, hello!\n");
            continue;
        }
        parley_reply *r;
        if (parley_pipeline_submit(p, user, line, NULL) != PARLEY_OK ||
            parley_pipeline_poll(p, -1, &r) != PARLEY_OK) {
            fprintf(stderr, "kiosk: %s\n", parley_errmsg());
            break;
        }
        if (r->status != PARLEY_OK)
            printf("kiosk> Sorry, something went wrong (%s).\n", r->error);
        else if (r->reply[0])
            printf("kiosk> %s\n", r->reply);
        else
            printf("kiosk> (understood: %s)\n", r->intent);
        for (size_t i = 0; i < r->n_slots; i++)
            printf("        %s = %s\n", r->slots[i].name, r->slots[i].value);
        parley_reply_free(r);
    }
    parley_pipeline_close(p);
    return 0;
}
