/* usdbake cat: read layers, write their canonical usda text. */
#include <stdio.h>
#include <string.h>

#include "ub_cli.h"
#include "ub_loader.h"
#include "ub_usda.h"

static void ub_cat_usage(void)
{
    printf("usage: usdbake cat [-o OUT] INPUT...\n"
           "\n"
           "Parse each INPUT layer and write it as canonical usda text, as\n"
           "OpenUSD's usdcat does.  INPUT or OUT may be '-' for standard\n"
           "input or output.  With several inputs and no -o, the texts are\n"
           "written one after another to standard output.\n"
           "\n"
           "Options:\n"
           "  -o, --output OUT  write to OUT (atomically; nothing is left\n"
           "                    behind on error)\n"
           "  -h, --help        show this help\n");
}

static int ub_cat_run(int argc, char **argv)
{
    const char *out = NULL;
    const char *inputs[argc];
    int n_inputs = 0;
    bool options_done = false;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int r;
        if (!options_done && strcmp(argv[i], "--") == 0) {
            options_done = true;
        } else if (!options_done &&
                   ((r = ub_cli_opt_value(argc, argv, &i, "-o", &v)) != 0 ||
                    (r = ub_cli_opt_value(argc, argv, &i, "--output", &v)) !=
                        0)) {
            if (r < 0)
                return ub_cli_usage_error("cat", "%s needs a file name",
                                          argv[i]);
            out = v;
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

    ub_strtab *strtab = ub_strtab_new();
    ub_diags *diags = ub_diags_new();
    ub_loader *ld = strtab && diags ? ub_loader_new(strtab, diags) : NULL;
    ub_buf text;
    ub_buf_init(&text);
    int status = UB_EXIT_OK;
    if (!ld) {
        fprintf(stderr, "usdbake: error: out of memory\n");
        status = UB_EXIT_INPUT;
    }
    /* Read every input before writing anything, so a bad second input
     * leaves no output at all, even on standard output. */
    ub_layer *layers[n_inputs > 0 ? n_inputs : 1];
    for (int i = 0; ld && i < n_inputs && status == UB_EXIT_OK; i++) {
        layers[i] = ub_loader_open(ld, inputs[i], NULL, (ub_loc){NULL, 0, 0});
        if (!layers[i])
            status = UB_EXIT_INPUT;
    }
    if (diags)
        ub_cli_print_diags(diags);
    ub_out sink;
    if (status == UB_EXIT_OK && ub_out_open(&sink, out) != 0)
        status = UB_EXIT_INPUT;
    if (status == UB_EXIT_OK) {
        /* Stream in 1 MiB pieces: the text of a 100 MB layer is never
         * held whole. */
        ub_buf_set_sink(&text, ub_out_write, &sink, 1u << 20);
        for (int i = 0; i < n_inputs && !text.failed; i++)
            ub_usda_write(layers[i], &text);
        if (ub_buf_flush(&text) != 0) {
            if (!text.sink_failed)
                fprintf(stderr, "usdbake: error: out of memory\n");
            ub_out_abort(&sink);
            status = UB_EXIT_INPUT;
        } else if (ub_out_commit(&sink) != 0) {
            status = UB_EXIT_INPUT;
        }
    }
    ub_buf_free(&text);
    ub_loader_free(ld);
    ub_diags_free(diags);
    ub_strtab_free(strtab);
    return status;
}

const ub_command ub_cmd_cat = {
    .name = "cat",
    .summary = "parse layers and write canonical usda text",
    .run = ub_cat_run,
    .usage = ub_cat_usage,
};
