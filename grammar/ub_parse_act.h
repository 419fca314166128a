/*
 * ub_parse_act — the grammar's actions (implemented in ub_parse.c).
 * Each takes the parse context and the locations it may report at.
 */
#ifndef UB_PARSE_ACT_H
#define UB_PARSE_ACT_H

#include "ub_parse_int.h"

static inline double ub_num_to_double(const ub_num *n)
{
    return n->kind == UB_NUM_U64   ? (double)n->v.u
           : n->kind == UB_NUM_I64 ? (double)n->v.i
                                   : n->v.d;
}

void ub_act_magic(ub_pctx *c, const char *text, ub_tokloc l);
void ub_act_syntax_error(ub_pctx *c, ub_tokloc l, bool lexical,
                         const char *got, const char *expected);
const char *ub_act_join(ub_pctx *c, const char *a, char sep, const char *b);
double ub_act_ident_number(ub_pctx *c, const char *id, ub_tokloc l);

/* metadata */
void ub_act_comment(ub_pctx *c, const char *s, ub_tokloc l);
void ub_act_doc(ub_pctx *c, const char *s, ub_tokloc l);
void ub_act_meta_begin(ub_pctx *c, const char *key, ub_tokloc l, int part);
void ub_act_meta_end(ub_pctx *c);
void ub_act_meta_dict(ub_pctx *c);
void ub_act_meta_none(ub_pctx *c, ub_tokloc l);
void ub_act_token_meta(ub_pctx *c, const char *key, const char *value,
                       ub_tokloc kl, ub_tokloc vl);
void ub_act_permission(ub_pctx *c, const char *id, ub_tokloc kl,
                       ub_tokloc vl);
void ub_act_display_unit(ub_pctx *c, const char *id, ub_tokloc l);
void ub_act_relocates(ub_pctx *c, ub_tokloc l);
void ub_act_sublayer(ub_pctx *c, const char *asset, ub_tokloc l);
void ub_act_sublayers_done(ub_pctx *c, ub_tokloc l);
void ub_act_offset(ub_pctx *c, int which, const ub_num *n, ub_tokloc l);
void ub_act_none_list(ub_pctx *c, ub_tokloc l);
void ub_act_push_path(ub_pctx *c, const char *s, ub_tokloc l);
void ub_act_paths(ub_pctx *c, const char *key, int part, ub_tokloc l);
void ub_act_ref(ub_pctx *c, const char *asset, const char *path,
                ub_tokloc al, ub_tokloc pl);
void ub_act_refs(ub_pctx *c, ub_type_id t, int part, ub_tokloc l);
void ub_act_dict_target(ub_pctx *c);
void ub_act_ref_custom_data(ub_pctx *c);
void ub_act_variants_begin(ub_pctx *c, ub_tokloc l);
void ub_act_variants(ub_pctx *c);
void ub_act_variant_sets(ub_pctx *c, int part, ub_tokloc l);
void ub_act_string_dict(ub_pctx *c, const char *key, ub_tokloc l);

/* split parse: the head grafts the tail (false: reads on instead); the
 * tail closes one enclosing level */
bool ub_act_split(ub_pctx *c);
void ub_act_tail_close(ub_pctx *c);

/* prims and variants */
void ub_act_prim_begin(ub_pctx *c, int spec, const char *type,
                       const char *name, ub_tokloc l);
void ub_act_prim_end(ub_pctx *c);
void ub_act_name_order(ub_pctx *c, int props, ub_tokloc l);
void ub_act_variant_set_begin(ub_pctx *c, const char *name, ub_tokloc l);
void ub_act_variant_set_end(ub_pctx *c);
void ub_act_variant_begin(ub_pctx *c, const char *name, ub_tokloc l);

/* properties */
void ub_act_attr_type(ub_pctx *c, const char *name, bool array,
                      ub_tokloc l);
void ub_act_attr_variability(ub_pctx *c, int var);
void ub_act_attr_begin(ub_pctx *c, bool custom, const char *name,
                       ub_tokloc l, int part);
void ub_act_prop_end(ub_pctx *c);
void ub_act_default(ub_pctx *c, bool none, ub_tokloc l);
void ub_act_connections(ub_pctx *c, ub_tokloc l);
void ub_act_samples_begin(ub_pctx *c, ub_tokloc l);
void ub_act_sample_begin(ub_pctx *c, double t);
void ub_act_sample(ub_pctx *c, bool none, ub_tokloc l);
void ub_act_rel_begin(ub_pctx *c, int kind, const char *name, ub_tokloc l,
                      int part);
void ub_act_targets(ub_pctx *c);
void ub_act_rel_default(ub_pctx *c, const char *path, ub_tokloc l);

/* dictionaries */
void ub_act_dict_open(ub_pctx *c, ub_tokloc l);
void ub_act_dict_close(ub_pctx *c);
void ub_act_dict_elem_begin(ub_pctx *c, const char *type, bool array,
                            const char *key, ub_tokloc tl, ub_tokloc kl);
void ub_act_dict_elem(ub_pctx *c);
void ub_act_dict_nested(ub_pctx *c, const char *key, ub_tokloc l);

/* value events */
void ub_vb_num(ub_pctx *c, const ub_num *n, ub_tokloc l);
void ub_vb_numlist(ub_pctx *c, ub_span s, ub_tokloc l);
void ub_vb_tuples(ub_pctx *c, ub_span s, ub_tokloc l, bool single);
void ub_vb_str(ub_pctx *c, const char *s, ub_tokloc l);
void ub_vb_ident(ub_pctx *c, const char *s, ub_tokloc l);
void ub_vb_asset(ub_pctx *c, const char *s, ub_tokloc l);
void ub_vb_path(ub_pctx *c, const char *s, ub_tokloc l);
void ub_vb_list_open(ub_pctx *c, ub_tokloc l);
void ub_vb_list_close(ub_pctx *c, ub_tokloc l);
void ub_vb_empty_list(ub_pctx *c, ub_tokloc l);
void ub_vb_tuple_open(ub_pctx *c, ub_tokloc l);
void ub_vb_tuple_close(ub_pctx *c, ub_tokloc l);

#endif
