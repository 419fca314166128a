#include "ub_stack.h"

#include <stdlib.h>

/* Placeholder until the merge lands (same session). */
int ub_stack_build(ub_stack *s, ub_loader *ld, ub_layer *root,
                   ub_diags *diags)
{
    (void)s; (void)ld; (void)root; (void)diags;
    return -1;
}

void ub_stack_free(ub_stack *s)
{
    (void)s;
}

ub_layer *ub_stack_flatten(const ub_stack *s, const char *out_path,
                           ub_diags *diags)
{
    (void)s; (void)out_path; (void)diags;
    return NULL;
}
