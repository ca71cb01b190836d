/* cmd_chat.c — `parley chat`: talk to a bot's pipeline on the terminal.
 *
 * The graph's text.stdin and text.stdout nodes are driven from here
 * (parley_pipeline_params.text_io): each line typed is submitted as a turn and its reply
 * printed before the next prompt. On a terminal the line is read with libedit (editing,
 * history kept in ~/.parley_history) and the NLU details are printed dimmed; from a pipe
 * lines are read plainly and echoed, so a script reads like a session. Lines that begin
 * with '/' are the chat's own commands (/help, /restart, /user NAME, /quit), never sent to
 * the bot. No pipeline logic lives here.
 */
#include <editline/readline.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sdk/cli/cli.h"

enum { MAX_USER = PARLEY_MAX_USER_ID_BYTES + 1 };

typedef struct chat {
    parley_pipeline *p;
    char user[MAX_USER];
    int restart;   /* the next turn starts a new session */
    int details;   /* print intent, confidence and slots under each reply */
    int colour;    /* the terminal shows ANSI colours */
    int tty;       /* lines come from a terminal (libedit) */
    char *history; /* the history file, or NULL */
} chat;

static void usage(FILE *f)
{
    fprintf(f, "usage: parley chat PIPELINE.yaml [--user ID] [--fresh] [--verbose]\n"
               "                   [--set NODE.PARAM=VALUE]...\n"
               "\n"
               "Talks to a bot on the terminal: each line you type is a turn of the graph's\n"
               "text.stdin node, and the reply its text.stdout node would write is printed.\n"
               "On a terminal the line can be edited (arrows, Ctrl-R, history in\n"
               "~/.parley_history) and the intent, confidence and slots are shown dimmed.\n"
               "  --user ID   your user id (default \"default\")\n"
               "  --fresh     start a new session: forget the form and slots the store kept\n"
               "  --verbose   show the intent, confidence and slots (always on a colour terminal)\n"
               "  --set X.P=V override param P of node X (or of every node of kind X)\n"
               "In the chat: /help, /restart (a new session: leaves any form), /user NAME, /quit.\n"
               "Ctrl-D ends it.\n");
}

static void chat_help(void)
{
    printf("  /restart    start a new session: the bot forgets the form and the slots\n"
           "  /user NAME  speak as another user (each has a conversation of their own)\n"
           "  /help       this list\n"
           "  /quit       leave (or Ctrl-D)\n");
}

static void print_reply(const chat *c, const parley_reply *r)
{
    if (r->status != PARLEY_OK) {
        printf("parley! turn failed: %s\n", r->error);
        return;
    }
    printf("parley> %s\n", r->reply[0] ? r->reply : "(no dialog in this graph)");
    if (!c->details)
        return;
    printf("%s         intent: %s (%.4f)  slots:", c->colour ? "\033[2m" : "",
           r->intent[0] ? r->intent : "-", cli_confidence(r->confidence));
    if (!r->n_slots)
        printf(" none");
    for (size_t i = 0; i < r->n_slots; i++)
        printf(" %s=%s", r->slots[i].name, r->slots[i].value);
    printf("%s\n", c->colour ? "\033[0m" : "");
}

/* A chat command (the line begins with '/'); returns 1 when the chat should end. */
static int command(chat *c, const char *line)
{
    static const char *const names[] = { "/help", "/restart", "/user", "/quit", "/exit", NULL };
    char name[32];
    size_t len = strcspn(line, " \t");
    snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), line);
    const char *arg = line + len + strspn(line + len, " \t");
    if (!strcmp(name, "/quit") || !strcmp(name, "/exit"))
        return 1;
    if (!strcmp(name, "/help")) {
        chat_help();
    } else if (!strcmp(name, "/restart")) {
        c->restart = 1;
        printf("(a new session for %s: the form and the slots are forgotten)\n", c->user);
    } else if (!strcmp(name, "/user") && parley_user_id_check(arg) == PARLEY_OK) {
        snprintf(c->user, sizeof c->user, "%s", arg);
        printf("(you are now %s)\n", c->user);
    } else if (!strcmp(name, "/user")) {
        printf("(/user NAME: %s; you are still %s)\n", parley_errmsg(), c->user);
    } else {
        const char *near = cli_suggest(name, names);
        printf("(no command %s%s%s%s /help lists them)\n", name, near ? ": did you mean " : ";",
               near ? near : "", near ? "?" : "");
    }
    return 0;
}

/* The next line without its newline (owned by the caller, free()), or NULL at the end. */
static char *read_line(const chat *c)
{
    if (c->tty)
        return readline("you> ");
    char *buf = NULL;
    size_t cap = 0;
    ssize_t n = getline(&buf, &cap, stdin);
    if (n < 0) {
        free(buf);
        return NULL;
    }
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        buf[--n] = '\0';
    printf("you> %s\n", buf); /* a script: show its lines, as a terminal would */
    return buf;
}

/* Reads lines until the end of input or /quit. */
static void converse(chat *c)
{
    char *line;
    while ((line = read_line(c))) {
        const char *text = line + strspn(line, " \t");
        if (c->tty && *text)
            add_history(line);
        if (*text == '/' && command(c, text)) {
            free(line);
            break;
        }
        if (*text && *text != '/') {
            parley_reply *r = NULL;
            parley_status st = parley_pipeline_submit_flags(
                    c->p, c->user, line, c->restart ? PARLEY_SUBMIT_NEW_SESSION : 0, NULL);
            if (st == PARLEY_OK && (st = parley_pipeline_poll(c->p, -1, &r)) == PARLEY_OK) {
                c->restart = 0;
                print_reply(c, r);
                parley_reply_free(r);
            } else {
                /* A refused turn (a bad user id or text) gets no reply: say why. */
                printf("parley! %s\n", parley_errmsg());
            }
        }
        free(line);
        fflush(stdout);
    }
    if (c->tty)
        printf("\n");
}

/* The user a `--set text.stdin.user=ID` names, or NULL. */
static const char *set_user(const char *const *sets, int n)
{
    static const char key[] = "text.stdin.user=";
    for (int i = n - 1; i >= 0; i--)
        if (!strncmp(sets[i], key, sizeof key - 1))
            return sets[i] + sizeof key - 1;
    return NULL;
}

int cmd_chat(int argc, char **argv)
{
    if (argc >= 2 && cli_is_help(argv[1])) {
        usage(stdout);
        return 0;
    }
    if (argc < 2 || argv[1][0] == '-') {
        usage(stderr);
        return 2;
    }
    const char **sets = calloc((size_t)argc, sizeof *sets);
    const char *user = NULL;
    int n = 0, fresh = 0, verbose = 0, rc = 2;
    chat c = { 0 };
    if (!sets)
        return 1;
    for (int i = 2; i < argc; i++) {
        static const char *const names[] = { "--user", "--fresh", "--verbose",
                                             "--set",  "--help",  NULL };
        if (!strcmp(argv[i], "--user") && i + 1 < argc && !user) {
            user = argv[++i];
        } else if (!strcmp(argv[i], "--user") && user) {
            fprintf(stderr, "parley chat: --user is given twice\n");
            goto done;
        } else if (!strcmp(argv[i], "--fresh")) {
            fresh = 1;
        } else if (!strcmp(argv[i], "--verbose")) {
            verbose = 1;
        } else if (!strcmp(argv[i], "--set") && i + 1 < argc) {
            sets[n++] = argv[++i];
        } else {
            rc = cli_unknown_option("chat", argv[i], names);
            goto done;
        }
    }
    const char *graph_user = set_user(sets, n);
    if (user && parley_user_id_check(user) != PARLEY_OK) {
        fprintf(stderr, "parley chat: --user: %s\n", parley_errmsg());
        rc = 2;
        goto done;
    }
    snprintf(c.user, sizeof c.user, "%s", user ? user : graph_user ? graph_user : "default");
    c.restart = fresh;
    c.tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
    const char *term = getenv("TERM");
    c.colour = isatty(STDOUT_FILENO) && !getenv("NO_COLOR") && term && strcmp(term, "dumb");
    c.details = verbose || c.colour;
    parley_pipeline_params pp = parley_pipeline_params_default();
    pp.overrides = sets;
    pp.text_io = 1;
    pp.on_event = cli_print_event;
    parley_status st = parley_pipeline_open(argv[1], &pp, &c.p);
    if (st != PARLEY_OK) {
        rc = cli_fail("chat", st);
        goto done;
    }
    const char *home = getenv("HOME");
    if (c.tty && home && (c.history = malloc(strlen(home) + 32))) {
        sprintf(c.history, "%s/.parley_history", home);
        using_history();
        stifle_history(1000);
        read_history(c.history);
    }
    if (c.tty)
        printf("Chatting as %s with %s. /restart leaves any form, /help lists the commands, "
               "Ctrl-D ends.\n",
               c.user, argv[1]);
    converse(&c);
    rc = 0;
    if (c.history)
        write_history(c.history);
    parley_pipeline_close(c.p);
done:
    free(c.history);
    free(sets);
    return rc;
}
