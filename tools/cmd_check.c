/* usdbake check: validate layer offsets, time metadata, structure and
 * value-clip metadata of the layers a shot reaches, before publish. */
#include <stdio.h>
#include <string.h>

#include "ub_check.h"
#include "ub_cli.h"
#include "ub_loader.h"
#include "ub_progress.h"

static void ub_check_usage(void)
{
    printf("usage: usdbake check [OPTIONS] ROOT...\n"
           "\n"
           "Read each ROOT layer with everything it reaches (sublayers,\n"
           "references, payloads, value clips and their manifests) and\n"
           "report problems with layer offsets, time metadata, structure\n"
           "and clip metadata, as `file:line:col: error: message [ID]`.\n"
           "Each ID is described in doc/checks.md.  ROOT may be '-' for\n"
           "standard input.\n"
           "\n"
           "Options:\n"
           "  --format text|json  diagnostics as text on standard error\n"
           "                      (default), or one JSON document on\n"
           "                      standard output\n"
           "  --werror            treat warnings as errors\n"
           "  --disable ID        do not run the check ID (repeatable)\n"
           "  --search-path DIR   also resolve asset paths under DIR\n"
           "                      (repeatable)\n"
           "  --list              list the checks and exit\n"
           "  -h, --help          show this help\n"
           "\n"
           "Exit status: 0 no errors, 1 errors found, 2 usage error.\n");
}

/* Append s as a JSON string: quotes, escapes, and U+FFFD for bytes that
 * are not UTF-8 (file names and authored text need not be). */
static void ub_json_string(ub_buf *b, const char *s)
{
    if (!s) {
        ub_buf_puts(b, "null");
        return;
    }
    const unsigned char *p = (const unsigned char *)s;
    ub_buf_putc(b, '"');
    while (*p) {
        unsigned char ch = *p;
        if (ch == '"' || ch == '\\') {
            ub_buf_putc(b, '\\');
            ub_buf_putc(b, (char)ch);
            p++;
        } else if (ch < 0x20) {
            switch (ch) {
            case '\n': ub_buf_puts(b, "\\n"); break;
            case '\r': ub_buf_puts(b, "\\r"); break;
            case '\t': ub_buf_puts(b, "\\t"); break;
            case '\b': ub_buf_puts(b, "\\b"); break;
            case '\f': ub_buf_puts(b, "\\f"); break;
            default: ub_buf_printf(b, "\\u%04x", ch); break;
            }
            p++;
        } else if (ch < 0x80) {
            ub_buf_putc(b, (char)ch);
            p++;
        } else {
            /* a well-formed UTF-8 sequence passes through unchanged */
            size_t n = 0;
            if (ch >= 0xc2 && ch <= 0xdf)
                n = 2;
            else if (ch >= 0xe0 && ch <= 0xef)
                n = 3;
            else if (ch >= 0xf0 && ch <= 0xf4)
                n = 4;
            bool ok = n > 0;
            for (size_t i = 1; ok && i < n; i++)
                ok = (p[i] & 0xc0) == 0x80;
            if (ok && n == 3) /* no overlongs, no surrogates */
                ok = !(ch == 0xe0 && p[1] < 0xa0) &&
                     !(ch == 0xed && p[1] >= 0xa0);
            if (ok && n == 4)
                ok = !(ch == 0xf0 && p[1] < 0x90) &&
                     !(ch == 0xf4 && p[1] >= 0x90);
            if (ok) {
                ub_buf_append(b, p, n);
                p += n;
            } else {
                ub_buf_puts(b, "\\ufffd");
                p++;
            }
        }
    }
    ub_buf_putc(b, '"');
}

static const char *ub_severity_word(ub_severity s)
{
    return s == UB_ERROR ? "error" : s == UB_WARNING ? "warning" : "note";
}

static void ub_check_json(ub_buf *b, ub_diags *d, bool werror,
                          size_t n_layers, size_t errors, size_t warnings)
{
    ub_buf_puts(b, "{\n  \"diagnostics\": [");
    for (size_t i = 0; i < ub_diags_count(d); i++) {
        const ub_diag *g = ub_diags_at(d, i);
        ub_severity sev = g->severity;
        if (werror && sev == UB_WARNING)
            sev = UB_ERROR;
        ub_buf_puts(b, i ? ",\n    {" : "\n    {");
        ub_buf_puts(b, "\"file\": ");
        ub_json_string(b, g->loc.file);
        ub_buf_printf(b, ", \"line\": %u, \"column\": %u, \"severity\": ",
                      g->loc.line, g->loc.col);
        ub_json_string(b, ub_severity_word(sev));
        ub_buf_puts(b, ", \"id\": ");
        ub_json_string(b, g->id);
        ub_buf_puts(b, ", \"message\": ");
        ub_json_string(b, g->message);
        ub_buf_puts(b, ", \"hint\": ");
        ub_json_string(b, g->hint);
        ub_buf_puts(b, ", \"source\": ");
        ub_json_string(b, g->line_text);
        ub_buf_putc(b, '}');
    }
    ub_buf_puts(b, ub_diags_count(d) ? "\n  ],\n" : "],\n");
    ub_buf_printf(b,
                  "  \"errors\": %zu,\n  \"warnings\": %zu,\n"
                  "  \"layers\": %zu\n}\n",
                  errors, warnings, n_layers);
}

static void ub_check_list(void)
{
    for (int i = 0; i < UB_CHK_COUNT; i++) {
        const ub_check_info *ci = ub_check_info_get((ub_check_kind)i);
        printf("%-28s %-7s %s\n", ci->id, ub_severity_word(ci->severity),
               ci->summary);
    }
}

static int ub_check_cmd(int argc, char **argv)
{
    ub_check_options opt;
    memset(&opt, 0, sizeof opt);
    bool json = false;
    const char *roots[argc];
    const char *search[argc];
    int n_roots = 0, n_search = 0;
    bool options_done = false;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int r;
        const char *a = argv[i];
        if (options_done || a[0] != '-' || a[1] == '\0') {
            roots[n_roots++] = a;
        } else if (strcmp(a, "--") == 0) {
            options_done = true;
        } else if (strcmp(a, "--werror") == 0) {
            opt.werror = true;
        } else if (strcmp(a, "--list") == 0) {
            ub_check_list();
            return UB_EXIT_OK;
        } else if ((r = ub_cli_opt_value(argc, argv, &i, "--format", &v))) {
            if (r < 0)
                return ub_cli_usage_error("check", "--format needs a value "
                                                   "(text or json)");
            if (strcmp(v, "json") == 0)
                json = true;
            else if (strcmp(v, "text") == 0)
                json = false;
            else
                return ub_cli_usage_error("check", "unknown format '%s' "
                                          "(expected text or json)", v);
        } else if ((r = ub_cli_opt_value(argc, argv, &i, "--disable", &v))) {
            if (r < 0)
                return ub_cli_usage_error("check", "--disable needs a "
                                                   "check ID");
            const ub_check_info *ci = ub_check_find(v);
            if (!ci)
                return ub_cli_usage_error("check", "unknown check ID '%s' "
                                          "(see usdbake check --list)", v);
            opt.disabled[ci->kind] = true;
        } else if ((r = ub_cli_opt_value(argc, argv, &i, "--search-path",
                                         &v))) {
            if (r < 0)
                return ub_cli_usage_error("check", "--search-path needs a "
                                                   "directory");
            search[n_search++] = v;
        } else {
            return ub_cli_usage_error("check", "unknown option '%s'", a);
        }
    }
    if (n_roots == 0)
        return ub_cli_usage_error("check", "no root layer given");

    ub_session ss;
    int status = UB_EXIT_OK;
    if (ub_session_open(&ss, search, n_search) != 0) {
        status = UB_EXIT_INPUT;
    } else {
        ub_loader *ld = ss.loader;
        ub_diags *diags = ss.diags;
        /* reading and parsing the layers is the long part */
        ub_progress prog;
        ub_progress_start(&prog, "checking layers", 0);
        ub_loader_set_progress(ld, ub_progress_loader_hook, &prog);
        ub_check_run(ld, ss.strtab, roots, (size_t)n_roots, &opt, diags);
        ub_progress_end(&prog);
        ub_diags_sort(diags);
        size_t errors = ub_diags_errors(diags);
        size_t warnings = ub_diags_warnings(diags);
        if (opt.werror) {
            errors += warnings;
            warnings = 0;
        }
        if (json) {
            ub_buf out;
            ub_buf_init(&out);
            ub_check_json(&out, diags, opt.werror, ub_loader_count(ld),
                          errors, warnings);
            if (out.failed) {
                fprintf(stderr, "usdbake: error: out of memory\n");
                status = UB_EXIT_INPUT;
            } else if (ub_cli_write_output(NULL, out.data, out.len) != 0) {
                status = UB_EXIT_INPUT;
            }
            ub_buf_free(&out);
        } else {
            ub_cli_print_diags(diags);
            if (errors || warnings)
                fprintf(stderr, "%zu error%s, %zu warning%s in %zu "
                                "layer%s\n",
                        errors, errors == 1 ? "" : "s", warnings,
                        warnings == 1 ? "" : "s", ub_loader_count(ld),
                        ub_loader_count(ld) == 1 ? "" : "s");
        }
        if (errors)
            status = UB_EXIT_INPUT;
    }
    ub_session_close(&ss);
    return status;
}

const ub_command ub_cmd_check = {
    .name = "check",
    .summary = "validate offsets, time metadata, structure and clips",
    .run = ub_check_cmd,
    .usage = ub_check_usage,
};
