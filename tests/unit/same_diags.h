/* Whether two diagnostic lists say the same thing: the same messages, in
 * the same order, with the same severities, lines, columns and quoted
 * lines.  For the tests that read one input two ways (one thread and
 * two) and must report alike; without CUnit, so that the fuzz targets
 * use it too. */
#ifndef SAME_DIAGS_H
#define SAME_DIAGS_H

#include <stdbool.h>
#include <string.h>

#include "ub_diag.h"

static inline bool same_diags(const ub_diags *a, const ub_diags *b)
{
    if (ub_diags_count(a) != ub_diags_count(b))
        return false;
    for (size_t i = 0; i < ub_diags_count(a); i++) {
        const ub_diag *x = ub_diags_at(a, i), *y = ub_diags_at(b, i);
        if (x->severity != y->severity || x->loc.line != y->loc.line ||
            x->loc.col != y->loc.col || strcmp(x->message, y->message) != 0 ||
            (x->line_text == NULL) != (y->line_text == NULL) ||
            (x->line_text && strcmp(x->line_text, y->line_text) != 0))
            return false;
    }
    return true;
}

#endif
