/* Placeholder until the real parser lands: it rejects every layer. */
#include "ub_parse.h"

#include <string.h>

ub_layer *ub_parse_usda(ub_strtab *t, const char *path, const char *text,
                        size_t len, ub_diags *diags)
{
    (void)t;
    (void)text;
    (void)len;
    ub_diag_add(diags, UB_ERROR, (ub_loc){path, 1, 1}, NULL, NULL, 0,
                "the usda parser is not built yet");
    return NULL;
}

int ub_parse_is_usda(const char *text, size_t len)
{
    return (len >= 6 && memcmp(text, "#usda ", 6) == 0) ||
           (len >= 5 && memcmp(text, "#sdf ", 5) == 0);
}
