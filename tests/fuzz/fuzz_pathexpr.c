/* libFuzzer target for pathExpression values (ub_pathexpr, with its
 * predicates in ub_predexpr): any text is an expression or a syntax error,
 * never a crash, a hang or a leak.  And the canonical text must hold, or
 * the target aborts: when it reads again (OpenUSD's writer, and so ours,
 * can write what its reader refuses: a control character in a predicate's
 * string argument), what it reads as is its own canonical text (the first
 * text need not be: OpenUSD writes a -0.0 argument as "-0", which reads
 * as the integer 0), and it can be anchored against a prim (with variant
 * selections) and mapped from one namespace into another.
 * Seeds: tests/fuzz/pathexpr/ (tests/fuzz/run.sh). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ub_pathexpr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* /Src maps to /Dst; a path anywhere else leaves the domain. */
static const char *ub_fuzz_map(void *ud, const char *path)
{
    char *buf = ud;
    if (strncmp(path, "/Src", 4) != 0 ||
        (path[4] && !strchr("/.{", path[4])))
        return NULL;
    size_t n = strlen(path + 4);
    if (n + 5 > 4096)
        return NULL;
    memcpy(buf, "/Dst", 4);
    memcpy(buf + 4, path + 4, n + 1);
    return buf;
}

/* Whether canon reads again; if it does, what it reads as must read as
 * itself. */
static bool ub_fuzz_fixed(const char *canon)
{
    char *again = NULL, *third = NULL;
    ub_pathexpr_status st =
        ub_pathexpr_rewrite(canon, NULL, NULL, NULL, &again);
    if (st == UB_PATHEXPR_OK &&
        (ub_pathexpr_rewrite(again, NULL, NULL, NULL, &third) !=
             UB_PATHEXPR_OK ||
         strcmp(third, again) != 0))
        abort();
    free(again);
    free(third);
    return st == UB_PATHEXPR_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *canon = NULL, *anchored = NULL, *mapped = NULL;
    ub_pathexpr_status st =
        ub_pathexpr_rewrite(text, NULL, NULL, NULL, &canon);
    if (st != UB_PATHEXPR_OK && canon)
        abort(); /* no text with an error */
    if (st == UB_PATHEXPR_OK && ub_fuzz_fixed(canon)) {
        if (ub_pathexpr_rewrite(canon, "/Src{v=a}C", NULL, NULL,
                                &anchored) != UB_PATHEXPR_OK)
            abort(); /* anchoring cannot make it unreadable */
        char buf[4096];
        ub_pathexpr_rewrite(anchored, NULL, ub_fuzz_map, buf, &mapped);
    }
    free(canon);
    free(anchored);
    free(mapped);
    free(text);
    return 0;
}
