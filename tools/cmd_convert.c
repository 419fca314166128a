/* usdbake convert: a layer (text or binary) to usda text, OpenUSD's crate
 * binary (.usdc) or usdbake's .usdb binary. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ub_cli.h"
#include "ub_loader.h"
#include "ub_usdb_write.h"

static void ub_convert_usage(void)
{
    printf("usage: usdbake convert [--format usda|usdc|usdb] [--level N] "
           "-o OUT INPUT\n"
           "\n"
           "Read the INPUT layer (usda text, crate or usdbake binary, told\n"
           "apart by content) and write it to OUT as usda text, as\n"
           "OpenUSD's crate binary (.usdc, which every USD application\n"
           "opens; doc/usdc.md) or as usdbake's archival binary (.usdb,\n"
           "doc/binary-format.md).\n"
           "The output format follows OUT's extension (.usda; .usdc and\n"
           ".usd are crate, as in OpenUSD; .usdb) unless --format is given.\n"
           "Converting back and forth loses nothing: `usdbake cat` prints\n"
           "the same text for all.  A .usdb is written as the input is\n"
           "read, prim by prim, in a fraction of the memory of the whole\n"
           "layer; a .usdc too, and it goes to its file as it is written,\n"
           "past USDBAKE_USDC_WINDOW bytes (default 2 MiB).  INPUT or OUT\n"
           "may be '-' (stdin/stdout; then give --format for OUT).\n"
           "\n"
           "Options:\n"
           "  -o, --output OUT   write to OUT (atomically)\n"
           "  -f, --format FMT   usda, usdc or usdb\n"
           "  -l, --level N      zstd level for usdb, 0 (store) to 22;\n"
           "                     default by the encoded size: 19 up to\n"
           "                     %zu KiB, 9 up to %zu MiB, 3 above\n"
           "  -h, --help         show this help\n",
           UB_USDB_AUTO_TINY >> 10, UB_USDB_AUTO_SMALL >> 20);
}

static int ub_convert_run(int argc, char **argv)
{
    const char *out = NULL, *input = NULL;
    ub_out_format format = UB_FMT_NONE;
    int level = UB_USDB_LEVEL_DEFAULT;
    bool options_done = false;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int r = 0;
        if (!options_done && strcmp(argv[i], "--") == 0) {
            options_done = true;
        } else if (!options_done &&
                   (r = ub_cli_opt_output(argc, argv, &i, "convert", &out)) != 0) {
            if (r < 0)
                return UB_EXIT_USAGE;
        } else if (!options_done &&
                   (r = ub_cli_opt_format(argc, argv, &i, "convert",
                                          &format)) != 0) {
            if (r < 0)
                return UB_EXIT_USAGE;
        } else if (!options_done &&
                   ((r = ub_cli_opt_value(argc, argv, &i, "-l", &v)) != 0 ||
                    (r = ub_cli_opt_value(argc, argv, &i, "--level", &v)) !=
                        0)) {
            char *end;
            long l = r > 0 ? strtol(v, &end, 10) : -1;
            if (r < 0 || *v == '\0' || *end != '\0' || l < 0 ||
                l > UB_USDB_LEVEL_MAX)
                return ub_cli_usage_error(
                    "convert", "--level takes a number from 0 to %d",
                    UB_USDB_LEVEL_MAX);
            level = (int)l;
        } else if (!options_done && argv[i][0] == '-' && argv[i][1]) {
            return ub_cli_usage_error("convert", "unknown option '%s'",
                                      argv[i]);
        } else if (input) {
            return ub_cli_usage_error("convert",
                                      "takes one input layer, got '%s' and "
                                      "'%s'",
                                      input, argv[i]);
        } else {
            input = argv[i];
        }
    }
    if (!input)
        return ub_cli_usage_error("convert", "no input layer given");
    if (!out)
        return ub_cli_usage_error("convert", "no output given (-o OUT)");
    if (!format)
        format = ub_cli_format_of_path(out);
    if (!format)
        return ub_cli_usage_error(
            "convert",
            "cannot tell the output format from '%s'; name it .usda, .usdc, "
            ".usd or .usdb, or give --format",
            out);
    if (ub_cli_binary_to_tty(format, out))
        return ub_cli_usage_error("convert",
                                  "not writing binary output to a terminal; "
                                  "use -o FILE");

    return ub_cli_convert("convert", input, out, format, level);
}

const ub_command ub_cmd_convert = {
    .name = "convert",
    .summary = "convert a layer between usda text, usdc and usdb binary",
    .run = ub_convert_run,
    .usage = ub_convert_usage,
};
