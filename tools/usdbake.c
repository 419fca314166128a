/*
 * usdbake — the command line.  Each subcommand lives in its own file
 * (tools/cmd_*.c); this one only dispatches.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ub_cli.h"

static const ub_command *const ub_commands[] = {
    &ub_cmd_cat,
    &ub_cmd_diff,
    &ub_cmd_flatten,
    &ub_cmd_check,
    &ub_cmd_convert,
    &ub_cmd_stitch,
    &ub_cmd_clip_manifest,
};

#define UB_NCOMMANDS (sizeof ub_commands / sizeof ub_commands[0])

static void ub_main_usage(FILE *out)
{
    fprintf(out,
            "usage: usdbake COMMAND [OPTIONS] ...\n"
            "\n"
            "A compiler for OpenUSD scene description.\n"
            "\n"
            "Commands:\n");
    for (size_t i = 0; i < UB_NCOMMANDS; i++)
        fprintf(out, "  %-13s %s\n", ub_commands[i]->name,
                ub_commands[i]->summary);
    fprintf(out,
            "\n"
            "Options:\n"
            "  -h, --help     show this help\n"
            "  -V, --version  show the version\n"
            "\n"
            "Run 'usdbake COMMAND --help' for a command's options.\n"
            "Exit status: 0 ok, 1 input errors, 2 usage errors.\n");
}

static int ub_main_run(int argc, char **argv)
{
    if (argc < 2) {
        ub_main_usage(stderr);
        return UB_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 ||
        strcmp(cmd, "help") == 0) {
        ub_main_usage(stdout);
        return UB_EXIT_OK;
    }
    if (strcmp(cmd, "-V") == 0 || strcmp(cmd, "--version") == 0) {
        printf("usdbake %s\n", PACKAGE_VERSION);
        return UB_EXIT_OK;
    }
    for (size_t i = 0; i < UB_NCOMMANDS; i++) {
        if (strcmp(cmd, ub_commands[i]->name) != 0)
            continue;
        for (int a = 2; a < argc; a++) {
            if (strcmp(argv[a], "--") == 0)
                break;
            if (strcmp(argv[a], "-h") == 0 || strcmp(argv[a], "--help") == 0) {
                ub_commands[i]->usage();
                return UB_EXIT_OK;
            }
            if (strcmp(argv[a], "-V") == 0 ||
                strcmp(argv[a], "--version") == 0) {
                printf("usdbake %s\n", PACKAGE_VERSION);
                return UB_EXIT_OK;
            }
        }
        return ub_commands[i]->run(argc - 1, argv + 1);
    }
    fprintf(stderr, "usdbake: unknown command '%s'\n", cmd);
    ub_main_usage(stderr);
    return UB_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    ub_cli_guard_std_fds();
    ub_cli_catch_signals();
    int rc = ub_main_run(argc, argv);
    /* What went through stdio (help, diff's differences, check's JSON)
     * must have reached standard output: a full disk or a closed pipe end
     * is an error, not a silent success (for diff, trouble: 2). */
    errno = 0;
    int flush_failed = fflush(stdout) != 0;
    int e = flush_failed ? errno : 0; /* (else errno is some older call's) */
    if (flush_failed || ferror(stdout)) {
        fprintf(stderr, "usdbake: error: cannot write to standard output%s%s\n",
                e ? ": " : "", e ? strerror(e) : "");
        if (argc > 1 && strcmp(argv[1], "diff") == 0)
            return UB_EXIT_USAGE;
        return rc != UB_EXIT_OK ? rc : UB_EXIT_INPUT;
    }
    return rc;
}
