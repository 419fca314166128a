/*
 * ub_cli — what every usdbake subcommand shares: printing diagnostics,
 * writing output files atomically, and the exit-code convention.
 */
#ifndef UB_CLI_H
#define UB_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ub_buf.h"
#include "ub_diag.h"
#include "ub_layer.h"
#include "ub_loader.h"
#include "ub_schema.h"

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
extern const ub_command ub_cmd_stitch;
extern const ub_command ub_cmd_clip_manifest;

/* What every command that reads layers holds: one string table, one
 * diagnostic list and a loader over both (with the -I search paths). */
typedef struct ub_session {
    ub_strtab *strtab;
    ub_diags *diags;
    ub_loader *loader;
    /* OpenUSD's schemas and those of the plugins on PXR_PLUGINPATH_NAME
     * (what they say is reported in diags) */
    ub_schema_reg *schemas;
} ub_session;

/* Returns 0, or -1 after printing "out of memory" (s is then empty, and
 * ub_session_close is still fine). */
int ub_session_open(ub_session *s, const char *const *search, int n_search);
void ub_session_close(ub_session *s);

/* The size of a regular file (a progress bar's total); 0 for "-", a pipe
 * or what cannot be read. */
uint64_t ub_cli_file_size(const char *path);

/* Print every diagnostic to stderr in the compiler style (sorted). */
void ub_cli_print_diags(ub_diags *d);

/* Report a usage error ("usdbake cat: ...") and return UB_EXIT_USAGE. */
int ub_cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Write bytes to path: "-" or NULL is stdout; anything else is written to a
 * temporary file beside it and renamed into place, so a failed run never
 * leaves a partial file.  Returns 0, or -1 after printing why. */
int ub_cli_write_output(const char *path, const void *data, size_t len);
/* write(2) until all of data is written.  Returns 0, or -1 with errno. */
int ub_cli_write_all(int fd, const void *data, size_t len);

/* An output being written: standard output, or a temporary file beside
 * the destination that ub_out_commit renames into place and ub_out_abort
 * removes.  ub_out_write fits ub_buf_sink_fn, so writers can stream. */
typedef struct ub_out {
    char *path; /* destination; NULL for standard output */
    char *tmp;  /* the temporary file, while open */
    int fd;
} ub_out;

/* Returns 0, or -1 after printing why. */
int ub_out_open(ub_out *o, const char *path);
int ub_out_write(void *out, const void *data, size_t len);
int ub_out_commit(ub_out *o);
/* Start a file output over (empty it).  Returns 0, or -1 after printing
 * why; standard output cannot be rewound. */
int ub_out_rewind(ub_out *o);
void ub_out_abort(ub_out *o);

/* The one place where an output's file name picks its writer: ".usdb" is
 * usdbake binary, anything else (and "-") usda text.  ub_cli_check_format
 * tells before any work whether path can be written (0), or prints why not
 * as a usage error of cmd and returns UB_EXIT_USAGE.  ub_cli_encode appends
 * layer's bytes in that format to out; returns 0, or -1 (errors in diags,
 * or printed). */
int ub_cli_check_format(const char *cmd, const char *path);
int ub_cli_encode(const ub_layer *layer, const char *path, ub_buf *out,
                  ub_diags *diags);

/* Whether the option at argv[*i] is `name` (taking a value): on a match,
 * stores the value (from "--opt=v" or the next argument), advances *i and
 * returns 1; returns -1 when the value is missing, 0 when no match. */
int ub_cli_opt_value(int argc, char **argv, int *i, const char *name,
                     const char **value);

#endif
