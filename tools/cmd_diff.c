/* usdbake diff: compare two layers semantically (what they mean, not how
 * they are laid out), as the conformance corpus judges a result. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ub_cli.h"
#include "ub_compare.h"
#include "ub_loader.h"

/* Enough to see what is wrong without flooding a terminal. */
#define UB_DIFF_DEFAULT_MAX 20

static void ub_diff_usage(void)
{
    printf("usage: usdbake diff [--tolerance REL] [--max N] "
           "[--any-prototype-numbers] A B\n"
           "\n"
           "Compare layers A and B semantically: the same prims in the same\n"
           "order, specifiers, type names, metadata, properties, defaults\n"
           "and time samples, values equal after parsing to their declared\n"
           "type.  Formatting, comments and the order of metadata fields do\n"
           "not matter.  Prints the first differences, one per line, as\n"
           "PATH: WHAT differs: ... (PATH is 'layer' for layer metadata).\n"
           "\n"
           "Options:\n"
           "  --tolerance REL  floating-point values, sample times and layer\n"
           "                   offsets may differ by this relative amount\n"
           "                   (default 0: exact; the conformance corpus\n"
           "                   uses 1e-9)\n"
           "  --max N          print at most N differences (default %d;\n"
           "                   0 for all)\n"
           "  --any-prototype-numbers\n"
           "                   flattened prototypes (/Flattened_Prototype_N)\n"
           "                   match whatever their numbers, paired in the\n"
           "                   order the other prims reach them (OpenUSD\n"
           "                   numbers them in a hash map's order)\n"
           "  -q, --quiet      print nothing, only set the exit status\n"
           "  -h, --help       show this help\n"
           "\n"
           "Exit status: 0 equal, 1 different, 2 usage error or an input\n"
           "that cannot be read (as diff(1) and cmp(1) do).\n",
           UB_DIFF_DEFAULT_MAX);
}

static int ub_diff_parse_number(const char *s, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(x) || x < 0)
        return -1;
    *out = x;
    return 0;
}

static int ub_diff_run(int argc, char **argv)
{
    const char *inputs[2];
    int n_inputs = 0;
    bool options_done = false, quiet = false;
    ub_compare_opts opts = {0.0, UB_DIFF_DEFAULT_MAX, false};
    for (int i = 1; i < argc; i++) {
        const char *v;
        int r;
        if (!options_done && strcmp(argv[i], "--") == 0) {
            options_done = true;
        } else if (!options_done &&
                   (r = ub_cli_opt_value(argc, argv, &i, "--tolerance",
                                         &v)) != 0) {
            if (r < 0 || ub_diff_parse_number(v, &opts.rel_tol) != 0)
                return ub_cli_usage_error(
                    "diff", "--tolerance needs a non-negative number");
        } else if (!options_done &&
                   (r = ub_cli_opt_value(argc, argv, &i, "--max", &v)) !=
                       0) {
            double n;
            if (r < 0 || ub_diff_parse_number(v, &n) != 0 || n != floor(n))
                return ub_cli_usage_error(
                    "diff", "--max needs a non-negative whole number");
            opts.max_differences = (size_t)n;
        } else if (!options_done &&
                   strcmp(argv[i], "--any-prototype-numbers") == 0) {
            opts.any_prototype_numbers = true;
        } else if (!options_done && (strcmp(argv[i], "-q") == 0 ||
                                     strcmp(argv[i], "--quiet") == 0)) {
            quiet = true;
        } else if (!options_done && argv[i][0] == '-' && argv[i][1]) {
            return ub_cli_usage_error("diff", "unknown option '%s'", argv[i]);
        } else if (n_inputs == 2) {
            return ub_cli_usage_error("diff", "expected two layers, got more");
        } else {
            inputs[n_inputs++] = argv[i];
        }
    }
    if (n_inputs != 2)
        return ub_cli_usage_error("diff", "expected two layers A and B");
    if (strcmp(inputs[0], "-") == 0 && strcmp(inputs[1], "-") == 0)
        return ub_cli_usage_error("diff", "only one input may be '-'");
    if (quiet)
        opts.max_differences = 1;

    ub_session ss = {0};
    ub_differences *found = ub_differences_new();
    int status = UB_EXIT_USAGE;
    if (!found) {
        fprintf(stderr, "usdbake: error: out of memory\n");
        goto done;
    }
    if (ub_session_open(&ss, NULL, 0) != 0)
        goto done;
    ub_loader *ld = ss.loader;
    ub_layer *a = ub_loader_open(ld, inputs[0], NULL, (ub_loc){NULL, 0, 0});
    ub_layer *b = a ? ub_loader_open(ld, inputs[1], NULL,
                                     (ub_loc){NULL, 0, 0})
                    : NULL;
    ub_cli_print_diags(ss.diags);
    if (!a || !b)
        goto done; /* cannot compare: trouble, as diff(1) says with 2 */
    long n = ub_compare_layers(a, b, &opts, found);
    if (n < 0) {
        fprintf(stderr, "usdbake: error: out of memory\n");
        goto done;
    }
    if (!quiet)
        for (size_t i = 0; i < ub_differences_count(found); i++) {
            const ub_difference *d = ub_differences_at(found, i);
            printf("%s: %s\n", d->path[0] ? d->path : "layer", d->message);
        }
    if (!quiet && opts.max_differences &&
        (size_t)n >= opts.max_differences)
        printf("(stopped after %ld differences; use --max 0 for all)\n", n);
    status = n ? 1 : UB_EXIT_OK;
done:
    ub_differences_free(found);
    ub_session_close(&ss);
    return status;
}

const ub_command ub_cmd_diff = {
    .name = "diff",
    .summary = "compare two layers semantically",
    .run = ub_diff_run,
    .usage = ub_diff_usage,
};
