/*
 * ub_cli — what every usdbake subcommand shares: printing diagnostics,
 * writing output files atomically, and the exit-code convention.
 */
#ifndef UB_CLI_H
#define UB_CLI_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ub_buf.h"
#include "ub_diag.h"
#include "ub_layer.h"
#include "ub_loader.h"
#include "ub_schema.h"
#include "ub_usdc_write.h"

enum {
    UB_EXIT_OK = 0,
    UB_EXIT_INPUT = 1, /* the input was bad (or an output could not be written) */
    UB_EXIT_USAGE = 2, /* the command line was bad */
};

/* Text written as it is made goes to the file in pieces of about this
 * size (cat, flatten).  The text's buffer and the output thread's copy of
 * a piece are both held, so a smaller piece saves memory (256 KiB took
 * 1.7 MB off flatten --layer-stack of the 20 MB bench layer), but the
 * clip bake then hands over four times as often and was up to 1.7x
 * slower (make bench's 2000-frame shot: 3.0-3.2 s against 1.9 s). */
#define UB_CLI_TEXT_CHUNK ((size_t)1 << 20)

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

/* Print the diagnostics to stderr in the compiler style (sorted): all of
 * them, or when memory ran out, those up to the first out-of-memory
 * error and how many more there are; and how many could not be kept. */
void ub_cli_print_diags(ub_diags *d);

/* Report a usage error ("usdbake cat: ...") and return UB_EXIT_USAGE. */
int ub_cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Write bytes to path: "-" or NULL is stdout; anything else is written to a
 * temporary file beside it and renamed into place, so a failed run never
 * leaves a partial file.  Returns 0, or -1 after printing why. */
int ub_cli_write_output(const char *path, const void *data, size_t len);

/* An output being written: standard output, or a temporary file beside
 * the destination that ub_out_commit renames into place and ub_out_abort
 * removes.  ub_out_write fits ub_buf_sink_fn, so writers can stream. */
typedef struct ub_out {
    char *path; /* destination; NULL for standard output */
    char *dest; /* the file a symbolic link at path names, or NULL */
    char *tmp;  /* the temporary file, while open */
    int fd;
    /* Held (ub_out_open_held, to standard output, a device or a pipe):
     * what is written waits in mem, and past UB_OUT_HOLD_MEM bytes in
     * the unlinked temporary file spill, until ub_out_commit. */
    bool held;
    char *mem;
    size_t mem_len, mem_cap;
    int spill; /* -1: none yet */
    uint64_t held_len;
    /* The temporary file mapped for reading back (ub_out_usdc_file's
     * view): its first view_len bytes, or none. */
    const char *view;
    size_t view_len;
    bool view_refused; /* mmap failed once: read back with pread */
} ub_out;

/* Held bytes kept in memory before they go to a temporary file. */
#define UB_OUT_HOLD_MEM ((size_t)16 << 20)

/* Returns 0, or -1 after printing why.  Standard output's names
 * (ub_cli_is_stdout) are standard output.  A path naming a device, a pipe or a
 * socket (/dev/null, a fifo), or a link in /dev or /proc, is written in
 * place, not through a temporary file; a symbolic link elsewhere keeps
 * naming the file it named, which is replaced; a directory is refused. */
int ub_out_open(ub_out *o, const char *path);
/* The same, except that what is written in place (standard output, a
 * device, a pipe) receives nothing before ub_out_commit (so that an
 * error leaves no partial output there either), while memory holds at
 * most UB_OUT_HOLD_MEM of it: the rest waits in an unlinked file in
 * $TMPDIR (default /tmp). */
int ub_out_open_held(ub_out *o, const char *path);
/* Bytes written so far (what ub_out_rewind_to can go back to), or -1
 * when the output cannot be started over. */
int64_t ub_out_tell(const ub_out *o);
/* Whether an output path is standard output: NULL, "-", /dev/stdout,
 * /dev/fd/1 or /proc/self/fd/1. */
bool ub_cli_is_stdout(const char *path);
/* Whether paths a and b name one file: the same file where both exist,
 * never where only one does, else the same name once their directories
 * are resolved (resolving only then: stitch asks it of every frame).
 * For outputs that must not replace an input or each other. */
bool ub_cli_same_file(const char *a, const char *b);
/* Standard input, output and error that were closed are held open on
 * /dev/null the wrong way round, so that no file the run opens takes
 * their numbers (the held output's spill file became standard output,
 * and the text went back into it) and using them still fails as on a
 * closed descriptor.  Called first by main. */
void ub_cli_guard_std_fds(void);
/* Install the handlers of SIGINT, SIGTERM and SIGHUP (except where they
 * are ignored): they remove the temporary files of the outputs open (not
 * committed or aborted) and end the process by the same signal (exit
 * status 128 + the signal's number in a shell); and of SIGBUS (a mapped
 * file's page that cannot be read), which says so first.  Called once
 * by main. */
void ub_cli_catch_signals(void);
int ub_out_write(void *out, const void *data, size_t len);
int ub_out_commit(ub_out *o);

/* An output written on a thread of its own, when the process may use two
 * CPUs: what a streaming writer hands over (ub_out_bg_write, a
 * ub_buf_sink_fn) goes to the file while the writer produces the next
 * bytes; a whole output lent at once (ub_out_bg_lend) goes while the
 * caller gives its memory back.  One hand-over is in flight at a time.
 * Finish it before committing or aborting o. */
typedef struct ub_out_bg {
    ub_out *o;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const char *send; /* the hand-over in flight: data, or what was lent */
    char *data;       /* the copies of ub_out_bg_write */
    size_t len, cap;
    uint64_t written, flushed; /* by the thread; writeback started */
    bool threaded, busy, stop;
    int err;       /* errno of a write that failed, or 0 */
    bool reported; /* err was printed */
} ub_out_bg;

void ub_out_bg_start(ub_out_bg *bg, ub_out *o);
/* Returns 0, or -1 after printing why (a hand-over before failed). */
int ub_out_bg_write(void *bg, const void *data, size_t len);
/* The same without a copy: data must stay as it is until
 * ub_out_bg_finish returns. */
int ub_out_bg_lend(ub_out_bg *bg, const void *data, size_t len);
/* Wait for the last hand-over.  Returns 0, or -1 after printing why. */
int ub_out_bg_finish(ub_out_bg *bg);
/* Drop what was written after the first `at` bytes (a file or a held
 * output; not standard output as such).  Returns 0, or -1 after printing
 * why. */
int ub_out_rewind_to(ub_out *o, uint64_t at);
void ub_out_abort(ub_out *o);

/* The crate writer's file (ub_usdc_file) on o, with the window given:
 * where o is a temporary file of its own (a regular file's), which the
 * writer can read back and patch, so that a big crate is not held whole.
 * false (and f untouched) for standard output, a device or a pipe: the
 * crate is then held whole and written at the end. */
bool ub_out_usdc_file(ub_out *o, size_t window, ub_usdc_file *f);
/* The environment variable var as a whole number from 1 to max into
 * *value (untouched when var is unset or empty): UB_EXIT_OK, or the exit
 * status of the usage error it reported ("VAR must be <must>, not ..."). */
int ub_cli_env_number(const char *cmd, const char *var, unsigned long long max,
                      const char *must, unsigned long long *value);
/* The window of the crate files `cmd` writes: USDBAKE_USDC_WINDOW (bytes)
 * when set, else UB_USDC_FILE_WINDOW.  UB_EXIT_OK, or the exit status of
 * the usage error it reported. */
int ub_cli_usdc_window(const char *cmd, size_t *window);

/* The output formats of the commands that write a layer. */
typedef enum ub_out_format {
    UB_FMT_NONE = 0,
    UB_FMT_USDA, /* canonical text */
    UB_FMT_USDC, /* OpenUSD's crate binary */
    UB_FMT_USDB, /* usdbake's own binary */
} ub_out_format;

/* The format named by a --format value ("usda", "usdc", "usdb"), or
 * UB_FMT_NONE. */
ub_out_format ub_cli_format_named(const char *name);
/* Whether argv[*i] is -f/--format FMT: 1 (and *fmt set, *i advanced) when
 * it is, 0 when it is another argument, -1 after a usage error of cmd was
 * printed (a missing or unknown format). */
/* -o/--output FILE (or --output=FILE) at argv[*i]: 1 with *path set, 0 when
 * argv[*i] is another option, -1 (usage already reported) when FILE is
 * missing. */
int ub_cli_opt_output(int argc, char **argv, int *i, const char *cmd,
                      const char **path);
int ub_cli_opt_format(int argc, char **argv, int *i, const char *cmd,
                      ub_out_format *fmt);
/* The format an output file's extension asks for: .usda text, .usdc and
 * .usd crate (OpenUSD's default for .usd), .usdb usdbake's binary;
 * UB_FMT_NONE for anything else (and for "-" or NULL). */
ub_out_format ub_cli_format_of_path(const char *path);
/* The one place that picks a writer: append layer to out in fmt (level is
 * the .usdb compression level; `to`, when not NULL, where a crate goes as
 * it is written, and where the samples a .usdc or .usdb is asked for
 * wait: ub_usdc_to).  Returns 0, or -1 after an error went to diags or
 * was printed. */
int ub_cli_write_layer(const ub_layer *layer, ub_out_format fmt, int level,
                       const ub_usdc_to *to, ub_buf *out, ub_diags *diags);
/* Read input (with a progress bar when that takes long) and write it to
 * out in format: convert, and cat to a binary (cmd names the command in
 * usage errors).  A text or crate input written as .usdb or .usdc is
 * streamed (prim by prim: memory holds the writer's tables and a part of
 * the layer, not the layer), with the bytes of writing it whole; a crate
 * goes to its file as it is written (ub_out_usdc_file).  Prints
 * diagnostics; returns the exit status. */
int ub_cli_convert(const char *cmd, const char *input, const char *out,
                   ub_out_format format, int level);

/* Open input in ss's loader with its prims handed to ps as they are
 * read (the stream is for this layer only). */
ub_layer *ub_cli_open_streamed(ub_session *ss, const char *input,
                               const ub_parse_stream *ps);

/* A layer that a streaming read could not stream (something that belongs
 * before a prim's children came after one of them), read again whole:
 * from the text it kept, else from its file.  Its diagnostics went out
 * with the first reading; these are dropped. */
typedef struct ub_cli_whole {
    ub_layer *layer; /* NULL when it could not be read (out of memory) */
    ub_layer *parsed;
    ub_loader *loader;
    ub_diags *quiet;
} ub_cli_whole;
void ub_cli_whole_read(ub_session *ss, const char *input,
                       const ub_layer *streamed, ub_cli_whole *w);
void ub_cli_whole_free(ub_cli_whole *w);
/* Whether binary output would go to a terminal (refused: use -o). */
bool ub_cli_binary_to_tty(ub_out_format fmt, const char *out);
/* A usage error (its exit status, after saying why) for an output named
 * .usdz, which would otherwise be written as text under a package's name
 * that no USD tool opens; UB_EXIT_OK for any other name. */
int ub_cli_no_usdz_output(const char *cmd, const char *out);

/* Whether the option at argv[*i] is `name` (taking a value): on a match,
 * stores the value (from "--opt=v" or the next argument), advances *i and
 * returns 1; returns -1 when the value is missing, 0 when no match. */
int ub_cli_opt_value(int argc, char **argv, int *i, const char *name,
                     const char **value);

#endif
