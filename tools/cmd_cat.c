/* usdbake cat: read layers, write their canonical usda text (or, for a
 * .usdc / .usd / .usdb output, that binary). */
#include <stdio.h>
#include <string.h>

#include "ub_cli.h"
#include "ub_loader.h"
#include "ub_parse.h"
#include "ub_progress.h"
#include "ub_usda.h"
#include "ub_usdb_write.h"

/* Bytes of text buffered before a file output gets them: small, as what
 * cat holds is meant to be the input, not its text. */
#define UB_CAT_CHUNK (64u << 10)

static void ub_cat_usage(void)
{
    printf("usage: usdbake cat [-o OUT] [--format usda|usdc|usdb] INPUT...\n"
           "\n"
           "Parse each INPUT layer and write it as canonical usda text, as\n"
           "OpenUSD's usdcat does.  INPUT or OUT may be '-' for standard\n"
           "input or output.  With several inputs and no -o, the texts are\n"
           "written one after another to standard output.  An OUT named\n"
           ".usdc or .usd gets OpenUSD's crate binary, .usdb usdbake's\n"
           "binary (one INPUT).\n"
           "\n"
           "Options:\n"
           "  -o, --output OUT  write to OUT (atomically; nothing is left\n"
           "                    behind on error)\n"
           "  -f, --format FMT  usda, usdc or usdb (default: from OUT's\n"
           "                    extension, else usda)\n"
           "  -h, --help        show this help\n");
}

/* Append the text of one input to text, whose sink is out.  Text and
 * crate layers are streamed: each prim is written as it closes and its
 * memory reused, so a layer far bigger than memory can be converted.
 * Returns 0, or -1 after the error was reported (in the loader's
 * diagnostics, or printed). */
static int ub_cat_one(ub_session *ss, const char *input, ub_buf *text,
                      ub_out *out)
{
    ub_loader *ld = ss->loader;
    /* where this input's text starts, should it have to be written again */
    if (ub_buf_flush(text) != 0)
        return -1;
    int64_t start = ub_out_tell(out);
    ub_usda_stream *st = ub_usda_stream_new(text);
    if (!st) {
        fprintf(stderr, "usdbake: error: out of memory\n");
        return -1;
    }
    ub_parse_stream ps = {.prim_done = ub_usda_stream_prim,
                          .prim_reopened = ub_usda_stream_reopened,
                          .ctx = st};
    size_t known = ub_loader_count(ld);
    ub_layer *layer = ub_cli_open_streamed(ss, input, &ps);
    int r;
    if (!layer)
        r = -1;
    else if (!layer->streamed)
        r = ub_usda_write(layer, text); /* a .usdb input */
    else if (ub_loader_count(ld) == known)
        r = 1; /* named before: the loader kept only its stubs */
    else
        r = ub_usda_stream_end(st, layer);
    ub_usda_stream_free(st);
    if (r == 1) {
        /* The layer cannot be streamed (a property authored after a child
         * prim) or was streamed already: write it from its text, whole.
         * Its diagnostics were reported by the first reading; what it
         * wrote of it is dropped. */
        if (start < 0 || ub_out_rewind_to(out, (uint64_t)start) != 0)
            return -1;
        text->len = 0;
        ub_cli_whole w;
        ub_cli_whole_read(ss, input, layer, &w);
        r = w.layer ? ub_usda_write(w.layer, text) : -1;
        ub_cli_whole_free(&w);
    }
    if (r != 0 && layer && !text->sink_failed)
        fprintf(stderr, "usdbake: error: out of memory\n");
    return r != 0 ? -1 : 0;
}

static int ub_cat_run(int argc, char **argv)
{
    const char *out = NULL;
    ub_out_format format = UB_FMT_NONE;
    const char *inputs[argc];
    int n_inputs = 0;
    bool options_done = false;
    for (int i = 1; i < argc; i++) {
        int r;
        if (!options_done && strcmp(argv[i], "--") == 0) {
            options_done = true;
        } else if (!options_done &&
                   (r = ub_cli_opt_output(argc, argv, &i, "cat", &out)) != 0) {
            if (r < 0)
                return UB_EXIT_USAGE;
        } else if (!options_done &&
                   (r = ub_cli_opt_format(argc, argv, &i, "cat", &format)) !=
                       0) {
            if (r < 0)
                return UB_EXIT_USAGE;
        } else if (!options_done && argv[i][0] == '-' && argv[i][1]) {
            return ub_cli_usage_error("cat", "unknown option '%s'", argv[i]);
        } else {
            inputs[n_inputs++] = argv[i];
        }
    }
    if (n_inputs == 0)
        return ub_cli_usage_error("cat", "no input layer given");
    if (out && n_inputs > 1)
        return ub_cli_usage_error("cat", "-o takes exactly one input, got %d",
                                  n_inputs);
    int bad = format ? UB_EXIT_OK : ub_cli_no_usdz_output("cat", out);
    if (bad != UB_EXIT_OK)
        return bad;
    if (!format)
        format = ub_cli_format_of_path(out);
    if (format == UB_FMT_USDC || format == UB_FMT_USDB) {
        if (n_inputs > 1)
            return ub_cli_usage_error("cat",
                                      "binary output takes exactly one "
                                      "input, got %d",
                                      n_inputs);
        if (ub_cli_binary_to_tty(format, out))
            return ub_cli_usage_error("cat",
                                      "not writing binary output to a "
                                      "terminal; use -o FILE");
        return ub_cli_convert("cat", inputs[0], out, format,
                              UB_USDB_LEVEL_DEFAULT);
    }

    ub_session ss;
    int status = ub_session_open(&ss, NULL, 0) == 0 ? UB_EXIT_OK
                                                    : UB_EXIT_INPUT;
    ub_buf text;
    ub_buf_init(&text);
    /* The text is written as the layers are read: to a temporary file
     * beside a regular file, renamed on success; held for standard
     * output (or a device, a pipe), which gets nothing until every input
     * has been read, so that a bad second input leaves no output at all
     * (ub_out_open_held: in memory up to a bound, then in a temporary
     * file). */
    ub_out sink;
    bool sink_open = false;
    if (status == UB_EXIT_OK) {
        if (ub_out_open_held(&sink, out) != 0)
            status = UB_EXIT_INPUT;
        else
            sink_open = true;
    }
    if (sink_open)
        ub_buf_set_sink(&text, ub_out_write, &sink, UB_CAT_CHUNK);
    /* the text is written as it is read: one bar covers both */
    uint64_t total = 0;
    for (int i = 0; i < n_inputs; i++)
        total += ub_cli_file_size(inputs[i]);
    ub_progress prog;
    ub_progress_start(&prog, "cat", total);
    if (status == UB_EXIT_OK)
        ub_loader_set_progress(ss.loader, ub_progress_loader_hook, &prog);
    for (int i = 0; i < n_inputs && status == UB_EXIT_OK; i++) {
        if (ub_cat_one(&ss, inputs[i], &text, &sink) != 0)
            status = UB_EXIT_INPUT;
    }
    ub_progress_end(&prog);
    if (ss.diags)
        ub_cli_print_diags(ss.diags);
    if (status == UB_EXIT_OK) {
        if (ub_buf_flush(&text) != 0) {
            /* the last piece did not go out: aborted below, so that
             * its temporary file goes too */
            if (!text.sink_failed)
                fprintf(stderr, "usdbake: error: out of memory\n");
            status = UB_EXIT_INPUT;
        } else {
            sink_open = false; /* committed, or cleaned up by commit */
            if (ub_out_commit(&sink) != 0)
                status = UB_EXIT_INPUT;
        }
    }
    if (sink_open)
        ub_out_abort(&sink);
    ub_buf_free(&text);
    ub_session_close(&ss);
    return status;
}

const ub_command ub_cmd_cat = {
    .name = "cat",
    .summary = "parse layers and write canonical usda text",
    .run = ub_cat_run,
    .usage = ub_cat_usage,
};
