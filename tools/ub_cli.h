/*
 * ub_cli — what every usdbake subcommand shares: printing diagnostics,
 * writing output files atomically, and the exit-code convention.
 */
#ifndef UB_CLI_H
#define UB_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "ub_buf.h"
#include "ub_diag.h"

enum {
    UB_EXIT_OK = 0,
    UB_EXIT_INPUT = 1, /* the input was bad (or an output could not be written) */
    UB_EXIT_USAGE = 2, /* the command line was bad */
};

/* One subcommand: argv[0] is the subcommand's name. */
typedef struct ub_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
    void (*usage)(void);
} ub_command;

extern const ub_command ub_cmd_cat;
extern const ub_command ub_cmd_diff;
extern const ub_command ub_cmd_flatten;
extern const ub_command ub_cmd_check;
extern const ub_command ub_cmd_convert;

/* Print every diagnostic to stderr in the compiler style (sorted). */
void ub_cli_print_diags(ub_diags *d);

/* Report a usage error ("usdbake cat: ...") and return UB_EXIT_USAGE. */
int ub_cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Write bytes to path: "-" or NULL is stdout; anything else is written to a
 * temporary file beside it and renamed into place, so a failed run never
 * leaves a partial file.  Returns 0, or -1 after printing why. */
int ub_cli_write_output(const char *path, const void *data, size_t len);

/* Whether the option at argv[*i] is `name` (taking a value): on a match,
 * stores the value (from "--opt=v" or the next argument), advances *i and
 * returns 1; returns -1 when the value is missing, 0 when no match. */
int ub_cli_opt_value(int argc, char **argv, int *i, const char *name,
                     const char **value);

#endif
