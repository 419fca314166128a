/*
 * The usda grammar.  Its shape (where newlines may and must appear, what
 * each metadata block allows) follows OpenUSD 24.08's textFileFormat.yy so
 * that exactly the same layers are accepted; the actions are thin calls
 * into ub_parse.c, which builds the ub_layer directly (no syntax tree).
 */
%define api.pure full
%define api.prefix {ub_yy}
%define parse.error custom
%define lr.default-reduction consistent
%locations
%parse-param {ub_pctx *ctx}
%lex-param {void *SCANNER}

%code requires {
#include "ub_parse_int.h"
}

%code provides {
int ub_yylex(UB_YYSTYPE *lval, UB_YYLTYPE *lloc, void *scanner);
#include "ub_parse_act.h"
}

%code {
#include <stdio.h>
#include <string.h>

#define SCANNER (ctx->scanner)
/* Room for UB_MAX_NESTING levels of the deepest nesting constructs (a
 * variant takes about six stack entries a level, a dictionary three); the
 * actions refuse input nested deeper (ub_parse.c). */
#define YYMAXDEPTH (16 * UB_MAX_NESTING)
/* Only bison's own failures (memory exhausted) arrive here. */
static void ub_yyerror(const UB_YYLTYPE *loc, ub_pctx *ctx, const char *msg)
{
    /* the parser stack is bounded (YYMAXDEPTH): only absurd nesting
     * exhausts it, and the rest of the pipeline recurses too */
    if (strcmp(msg, "memory exhausted") == 0)
        ub_perr(ctx, *loc, "nested too deeply (prims, variants or values "
                "nested thousands of levels deep)");
    else
        ub_perr(ctx, *loc, "%s", msg);
}
#define YYLLOC_DEFAULT(Cur, Rhs, N)                                       \
    do {                                                                  \
        if (N)                                                            \
            (Cur) = YYRHSLOC(Rhs, 1);                                     \
        else                                                              \
            (Cur) = YYRHSLOC(Rhs, 0);                                     \
    } while (0)
}

%union {
    const char *s;
    ub_num num;
    ub_span span;
    int i;
    double d;
}

%token TOK_NL "newline"
%token <s> TOK_MAGIC "file header"
%token TOK_SYNERR "invalid token"
%token <s> TOK_ASSET "asset path"
%token <s> TOK_PATHREF "path"
%token <s> TOK_IDENT "identifier"
%token <s> TOK_CXXIDENT "C++ namespaced identifier"
%token <s> TOK_NSIDENT "namespaced identifier"
%token <num> TOK_NUMBER "number"
%token <span> TOK_NUMLIST "numbers"
%token <span> TOK_TUPLES "tuples"
%token <s> TOK_STRING "string"
/* keywords: keep TOK_ADD first and the block contiguous (the scanner
 * indexes a table with tok - TOK_ADD) */
%token <s> TOK_ADD "'add'"
%token <s> TOK_APPEND "'append'"
%token <s> TOK_CLASS "'class'"
%token <s> TOK_CONFIG "'config'"
%token <s> TOK_CONNECT "'connect'"
%token <s> TOK_CUSTOM "'custom'"
%token <s> TOK_CUSTOMDATA "'customData'"
%token <s> TOK_DEF "'def'"
%token <s> TOK_DEFAULT "'default'"
%token <s> TOK_DELETE "'delete'"
%token <s> TOK_DICTIONARY "'dictionary'"
%token <s> TOK_DISPLAYUNIT "'displayUnit'"
%token <s> TOK_DOC "'doc'"
%token <s> TOK_INHERITS "'inherits'"
%token <s> TOK_KIND "'kind'"
%token <s> TOK_NAMECHILDREN "'nameChildren'"
%token <s> TOK_NONE "'None'"
%token <s> TOK_OFFSET "'offset'"
%token <s> TOK_OVER "'over'"
%token <s> TOK_PAYLOAD "'payload'"
%token <s> TOK_PERMISSION "'permission'"
%token <s> TOK_PREFIX_SUBSTITUTIONS "'prefixSubstitutions'"
%token <s> TOK_PREPEND "'prepend'"
%token <s> TOK_PROPERTIES "'properties'"
%token <s> TOK_REFERENCES "'references'"
%token <s> TOK_RELOCATES "'relocates'"
%token <s> TOK_REL "'rel'"
%token <s> TOK_REORDER "'reorder'"
%token <s> TOK_ROOTPRIMS "'rootPrims'"
%token <s> TOK_SCALE "'scale'"
%token <s> TOK_SUBLAYERS "'subLayers'"
%token <s> TOK_SUFFIX_SUBSTITUTIONS "'suffixSubstitutions'"
%token <s> TOK_SPECIALIZES "'specializes'"
%token <s> TOK_SYMMETRYARGUMENTS "'symmetryArguments'"
%token <s> TOK_SYMMETRYFUNCTION "'symmetryFunction'"
%token <s> TOK_TIME_SAMPLES "'timeSamples'"
%token <s> TOK_UNIFORM "'uniform'"
%token <s> TOK_VARIANTSET "'variantSet'"
%token <s> TOK_VARIANTSETS "'variantSets'"
%token <s> TOK_VARIANTS "'variants'"
%token <s> TOK_VARYING "'varying'"
/* never in a layer's text: the scanner makes them for a split parse
 * (ub_parse.c), and syntax errors never name them */
%token TOK_SPLIT "split point"
%token TOK_START_TAIL "start of a tail"
%token TOK_TAIL_END "end of a tail"

%type <s> identifier namespaced_name keyword prim_type_name dict_key
%type <i> listop_kw specifier rel_type attr_variability
%type <d> extended_number layer_offset_stmt

%%

file:
    TOK_MAGIC { ub_act_magic(ctx, $1, @1); } layer_body
    | TOK_START_TAIL tail TOK_TAIL_END
    ;

layer_body:
    layer_metadata_opt
    | layer_metadata_opt prim_list newlines_opt
    ;

layer_metadata_opt:
    newlines_opt
    | newlines_opt '(' layer_metadata_list_opt ')' newlines_opt
    ;

layer_metadata_list_opt:
    newlines_opt
    | newlines_opt layer_metadata_list stmtsep_opt
    ;

layer_metadata_list:
    layer_metadata
    | layer_metadata_list stmtsep layer_metadata
    ;

layer_metadata:
    TOK_STRING { ub_act_comment(ctx, $1, @1); }
    | layer_meta_head metadata_value { ub_act_meta_end(ctx); }
    | listop_meta_head metadata_listop_list { ub_act_meta_end(ctx); }
    | TOK_DOC '=' TOK_STRING { ub_act_doc(ctx, $3, @1); }
    | TOK_RELOCATES '=' relocates_map { ub_act_relocates(ctx, @1); }
    | TOK_SUBLAYERS '=' sublayer_list { ub_act_sublayers_done(ctx, @1); }
    ;

layer_meta_head:
    identifier '=' { ub_act_meta_begin(ctx, $1, @1, UB_LO_EXPLICIT); }
    ;

listop_meta_head:
    listop_kw identifier '=' { ub_act_meta_begin(ctx, $2, @2, $1); }
    ;

listop_kw:
    TOK_DELETE { $$ = UB_LO_DELETE; }
    | TOK_ADD { $$ = UB_LO_ADD; }
    | TOK_PREPEND { $$ = UB_LO_PREPEND; }
    | TOK_APPEND { $$ = UB_LO_APPEND; }
    | TOK_REORDER { $$ = UB_LO_REORDER; }
    ;

sublayer_list:
    '[' newlines_opt ']'
    | '[' newlines_opt sublayer_list_int listsep_opt ']'
    ;

sublayer_list_int:
    sublayer_stmt
    | sublayer_list_int listsep sublayer_stmt
    ;

sublayer_stmt:
    TOK_ASSET layer_offset_opt { ub_act_sublayer(ctx, $1, @1); }
    ;

layer_offset_opt:
    %empty
    | '(' layer_offset_int stmtsep_opt ')'
    ;

layer_offset_int:
    layer_offset_stmt
    | layer_offset_int stmtsep layer_offset_stmt
    ;

layer_offset_stmt:
    TOK_OFFSET '=' TOK_NUMBER { $$ = 0; ub_act_offset(ctx, 0, &$3, @3); }
    | TOK_SCALE '=' TOK_NUMBER { $$ = 0; ub_act_offset(ctx, 1, &$3, @3); }
    ;

prim_list:
    prim_stmt
    | TOK_SPLIT { if (ub_act_split(ctx)) YYACCEPT; } prim_stmt
    | prim_list newlines prim_stmt
    | prim_list newlines TOK_SPLIT { if (ub_act_split(ctx)) YYACCEPT; }
        prim_stmt
    ;

/* --- prims ----------------------------------------------------------- */

prim_stmt:
    prim_head prim_metadata_opt '{' prim_contents_list_opt '}'
        { ub_act_prim_end(ctx); }
    | TOK_REORDER TOK_ROOTPRIMS '=' name_list
        { ub_act_name_order(ctx, 0, @1); }
    ;

prim_head:
    specifier TOK_STRING { ub_act_prim_begin(ctx, $1, NULL, $2, @2); }
    | specifier prim_type_name TOK_STRING
        { ub_act_prim_begin(ctx, $1, $2, $3, @3); }
    ;

specifier:
    TOK_DEF { $$ = UB_DEF; }
    | TOK_CLASS { $$ = UB_CLASS; }
    | TOK_OVER { $$ = UB_OVER; }
    ;

prim_type_name:
    identifier
    | prim_type_name '.' identifier { $$ = ub_act_join(ctx, $1, '.', $3); }
    ;

prim_metadata_opt:
    newlines_opt
    | newlines_opt '(' prim_metadata_list_opt ')' newlines_opt
    ;

prim_metadata_list_opt:
    newlines_opt
    | newlines_opt prim_metadata_list stmtsep_opt
    ;

prim_metadata_list:
    prim_metadata
    | prim_metadata_list stmtsep prim_metadata
    ;

meta_head:
    TOK_IDENT '=' { ub_act_meta_begin(ctx, $1, @1, UB_LO_EXPLICIT); }
    | TOK_CXXIDENT '=' { ub_act_meta_begin(ctx, $1, @1, UB_LO_EXPLICIT); }
    | TOK_CUSTOMDATA '=' { ub_act_meta_begin(ctx, $1, @1, UB_LO_EXPLICIT); }
    | TOK_SYMMETRYARGUMENTS '='
        { ub_act_meta_begin(ctx, $1, @1, UB_LO_EXPLICIT); }
    ;

prim_metadata:
    TOK_STRING { ub_act_comment(ctx, $1, @1); }
    | meta_head metadata_value { ub_act_meta_end(ctx); }
    | listop_meta_head metadata_listop_list { ub_act_meta_end(ctx); }
    | TOK_DOC '=' TOK_STRING { ub_act_doc(ctx, $3, @1); }
    | TOK_KIND '=' TOK_STRING { ub_act_token_meta(ctx, $1, $3, @1, @3); }
    | TOK_PERMISSION '=' identifier { ub_act_permission(ctx, $3, @1, @3); }
    | TOK_PAYLOAD '=' payload_list
        { ub_act_refs(ctx, UB_TY_PAYLOAD, UB_LO_EXPLICIT, @1); }
    | listop_kw TOK_PAYLOAD '=' payload_list
        { ub_act_refs(ctx, UB_TY_PAYLOAD, $1, @2); }
    | TOK_INHERITS '=' path_list
        { ub_act_paths(ctx, $1, UB_LO_EXPLICIT, @1); }
    | listop_kw TOK_INHERITS '=' path_list
        { ub_act_paths(ctx, $2, $1, @2); }
    | TOK_SPECIALIZES '=' path_list
        { ub_act_paths(ctx, $1, UB_LO_EXPLICIT, @1); }
    | listop_kw TOK_SPECIALIZES '=' path_list
        { ub_act_paths(ctx, $2, $1, @2); }
    | TOK_REFERENCES '=' reference_list
        { ub_act_refs(ctx, UB_TY_REFERENCE, UB_LO_EXPLICIT, @1); }
    | listop_kw TOK_REFERENCES '=' reference_list
        { ub_act_refs(ctx, UB_TY_REFERENCE, $1, @2); }
    | TOK_RELOCATES '=' relocates_map { ub_act_relocates(ctx, @1); }
    | variants_head typed_dictionary { ub_act_variants(ctx); }
    | TOK_VARIANTSETS '=' name_list
        { ub_act_variant_sets(ctx, UB_LO_EXPLICIT, @1); }
    | listop_kw TOK_VARIANTSETS '=' name_list
        { ub_act_variant_sets(ctx, $1, @2); }
    | TOK_SYMMETRYFUNCTION '=' identifier
        { ub_act_token_meta(ctx, $1, $3, @1, @3); }
    | TOK_SYMMETRYFUNCTION '='
        { ub_act_token_meta(ctx, $1, NULL, @1, @1); }
    | TOK_PREFIX_SUBSTITUTIONS '=' string_dictionary
        { ub_act_string_dict(ctx, $1, @1); }
    | TOK_SUFFIX_SUBSTITUTIONS '=' string_dictionary
        { ub_act_string_dict(ctx, $1, @1); }
    ;

variants_head:
    TOK_VARIANTS '=' { ub_act_variants_begin(ctx, @1); }
    ;

payload_list:
    TOK_NONE { ub_act_none_list(ctx, @1); }
    | payload_list_item
    | '[' newlines_opt ']'
    | '[' newlines_opt payload_list_int listsep_opt ']'
    ;

payload_list_int:
    payload_list_item
    | payload_list_int listsep payload_list_item
    ;

payload_list_item:
    TOK_ASSET payload_params_opt { ub_act_ref(ctx, $1, NULL, @1, @1); }
    | TOK_ASSET TOK_PATHREF payload_params_opt
        { ub_act_ref(ctx, $1, $2, @1, @2); }
    | TOK_PATHREF payload_params_opt { ub_act_ref(ctx, NULL, $1, @1, @1); }
    ;

payload_params_opt:
    %empty
    | '(' newlines_opt ')'
    | '(' newlines_opt payload_params_int stmtsep_opt ')'
    ;

payload_params_int:
    layer_offset_stmt
    | payload_params_int stmtsep layer_offset_stmt
    ;

reference_list:
    TOK_NONE { ub_act_none_list(ctx, @1); }
    | reference_list_item
    | '[' newlines_opt ']'
    | '[' newlines_opt reference_list_int listsep_opt ']'
    ;

reference_list_int:
    reference_list_item
    | reference_list_int listsep reference_list_item
    ;

reference_list_item:
    TOK_ASSET reference_params_opt { ub_act_ref(ctx, $1, NULL, @1, @1); }
    | TOK_ASSET TOK_PATHREF reference_params_opt
        { ub_act_ref(ctx, $1, $2, @1, @2); }
    | TOK_PATHREF reference_params_opt { ub_act_ref(ctx, NULL, $1, @1, @1); }
    ;

reference_params_opt:
    %empty
    | '(' newlines_opt ')'
    | '(' newlines_opt reference_params_int stmtsep_opt ')'
    ;

reference_params_int:
    reference_params_item
    | reference_params_int stmtsep reference_params_item
    ;

reference_params_item:
    layer_offset_stmt
    | ref_custom_data_head typed_dictionary { ub_act_ref_custom_data(ctx); }
    ;

ref_custom_data_head:
    TOK_CUSTOMDATA '=' { ub_act_dict_target(ctx); }
    ;

path_list:
    TOK_NONE { ub_act_none_list(ctx, @1); }
    | path_list_item
    | '[' newlines_opt ']'
    | '[' newlines_opt path_list_int listsep_opt ']'
    ;

path_list_int:
    path_list_item
    | path_list_int listsep path_list_item
    ;

path_list_item:
    TOK_PATHREF { ub_act_push_path(ctx, $1, @1); }
    ;

relocates_map:
    '{' newlines_opt relocates_stmt_list_opt '}'
    ;

relocates_stmt_list_opt:
    %empty
    | relocates_stmt_list listsep_opt
    ;

relocates_stmt_list:
    relocates_stmt
    | relocates_stmt_list listsep relocates_stmt
    ;

relocates_stmt:
    TOK_PATHREF ':' TOK_PATHREF
        { ub_act_push_path(ctx, $1, @1); ub_act_push_path(ctx, $3, @3); }
    ;

name_list:
    name_list_item
    | '[' newlines_opt name_list_int listsep_opt ']'
    ;

name_list_int:
    name_list_item
    | name_list_int listsep name_list_item
    ;

name_list_item:
    TOK_STRING { ub_act_push_path(ctx, $1, @1); }
    ;

/* --- prim contents ---------------------------------------------------- */

prim_contents_list_opt:
    newlines_opt
    | newlines_opt prim_contents_list
    ;

prim_contents_list:
    prim_contents_list_item
    | prim_contents_list prim_contents_list_item
    ;

prim_contents_list_item:
    prim_attribute stmtsep
    | prim_relationship stmtsep
    | prim_child_order_stmt stmtsep
    | prim_property_order_stmt stmtsep
    | prim_stmt newlines
    | variantset_stmt newlines
    | TOK_SPLIT { if (ub_act_split(ctx)) YYACCEPT; }
    ;

/* The tail of a split parse: what follows a statement start inside the
 * prim (or at the root) where the split is, each `}` closing one more
 * enclosing level.  The head checks that the levels fit (ub_act_split).
 * It ends with a token of its own, not the end of file: LALR shares the
 * states of prim bodies between here and a serial parse, and the end of
 * file must not become a lookahead there (it would change which state
 * reports a truncated layer, and so what the message expects). */
tail:
    prim_contents_list_opt
    | tail_closed { ctx->tail_nl_missing = true; }
    | tail_closed newlines
    | tail_closed newlines prim_contents_list
    ;

tail_closed:
    tail '}' { ub_act_tail_close(ctx); }
    ;

variantset_stmt:
    variantset_head '=' newlines_opt '{' newlines_opt variant_list '}'
        { ub_act_variant_set_end(ctx); }
    ;

variantset_head:
    TOK_VARIANTSET TOK_STRING { ub_act_variant_set_begin(ctx, $2, @2); }
    ;

variant_list:
    variant_stmt
    | variant_list variant_stmt
    ;

variant_stmt:
    variant_head prim_metadata_opt '{' prim_contents_list_opt '}'
        newlines_opt { ub_act_prim_end(ctx); }
    ;

variant_head:
    TOK_STRING { ub_act_variant_begin(ctx, $1, @1); }
    ;

prim_child_order_stmt:
    TOK_REORDER TOK_NAMECHILDREN '=' name_list
        { ub_act_name_order(ctx, 0, @1); }
    ;

prim_property_order_stmt:
    TOK_REORDER TOK_PROPERTIES '=' name_list
        { ub_act_name_order(ctx, 1, @1); }
    ;

/* --- attributes ------------------------------------------------------- */

attr_variability:
    TOK_UNIFORM { $$ = UB_UNIFORM; }
    | TOK_CONFIG { $$ = UB_CONFIG; }
    ;

attr_type:
    TOK_IDENT { ub_act_attr_type(ctx, $1, false, @1); }
    | TOK_CXXIDENT { ub_act_attr_type(ctx, $1, false, @1); }
    | TOK_IDENT '[' ']' { ub_act_attr_type(ctx, $1, true, @1); }
    | TOK_CXXIDENT '[' ']' { ub_act_attr_type(ctx, $1, true, @1); }
    ;

attr_full_type:
    attr_type { ub_act_attr_variability(ctx, UB_VARYING); }
    | attr_variability attr_type { ub_act_attr_variability(ctx, $1); }
    ;

attr_head:
    attr_full_type namespaced_name
        { ub_act_attr_begin(ctx, false, $2, @2, UB_LO_EXPLICIT); }
    ;

custom_attr_head:
    TOK_CUSTOM attr_full_type namespaced_name
        { ub_act_attr_begin(ctx, true, $3, @3, UB_LO_EXPLICIT); }
    ;

listop_attr_head:
    listop_kw attr_full_type namespaced_name
        { ub_act_attr_begin(ctx, false, $3, @3, $1); }
    ;

prim_attribute:
    custom_attr_head attribute_assignment_opt attribute_metadata_list_opt
        { ub_act_prop_end(ctx); }
    | attr_head attribute_assignment_opt attribute_metadata_list_opt
        { ub_act_prop_end(ctx); }
    | attr_head '.' TOK_CONNECT '=' connect_rhs
        { ub_act_connections(ctx, @3); }
    | listop_attr_head '.' TOK_CONNECT '=' connect_rhs
        { ub_act_connections(ctx, @3); }
    | attr_head '.' TOK_TIME_SAMPLES '=' time_samples_rhs
        { ub_act_prop_end(ctx); }
    ;

connect_rhs:
    TOK_NONE { ub_act_none_list(ctx, @1); }
    | connect_item
    | '[' newlines_opt ']'
    | '[' newlines_opt connect_list listsep_opt ']'
    ;

connect_list:
    connect_item
    | connect_list listsep connect_item
    ;

connect_item:
    TOK_PATHREF { ub_act_push_path(ctx, $1, @1); }
    ;

time_samples_rhs:
    time_samples_open newlines_opt time_sample_list '}'
    ;

time_samples_open:
    '{' { ub_act_samples_begin(ctx, @1); }
    ;

time_sample_list:
    %empty
    | time_sample_list_int listsep_opt
    ;

time_sample_list_int:
    time_sample
    | time_sample_list_int listsep time_sample
    ;

time_sample:
    time_sample_head typed_value { ub_act_sample(ctx, false, @2); }
    | time_sample_head TOK_NONE { ub_act_sample(ctx, true, @2); }
    ;

time_sample_head:
    extended_number ':' { ub_act_sample_begin(ctx, $1); }
    ;

attribute_metadata_list_opt:
    %empty
    | '(' newlines_opt ')'
    | '(' newlines_opt attribute_metadata_list stmtsep_opt ')'
    ;

attribute_metadata_list:
    attribute_metadata
    | attribute_metadata_list stmtsep attribute_metadata
    ;

attribute_metadata:
    TOK_STRING { ub_act_comment(ctx, $1, @1); }
    | meta_head metadata_value { ub_act_meta_end(ctx); }
    | listop_meta_head metadata_listop_list { ub_act_meta_end(ctx); }
    | TOK_DOC '=' TOK_STRING { ub_act_doc(ctx, $3, @1); }
    | TOK_PERMISSION '=' identifier { ub_act_permission(ctx, $3, @1, @3); }
    | TOK_DISPLAYUNIT '=' identifier { ub_act_display_unit(ctx, $3, @3); }
    | TOK_SYMMETRYFUNCTION '=' identifier
        { ub_act_token_meta(ctx, $1, $3, @1, @3); }
    | TOK_SYMMETRYFUNCTION '='
        { ub_act_token_meta(ctx, $1, NULL, @1, @1); }
    ;

attribute_assignment_opt:
    %empty
    | '=' typed_value { ub_act_default(ctx, false, @2); }
    | '=' TOK_NONE { ub_act_default(ctx, true, @2); }
    ;

/* --- dictionaries ------------------------------------------------------ */

typed_dictionary:
    dict_open newlines_opt typed_dictionary_list_opt '}'
        { ub_act_dict_close(ctx); }
    ;

dict_open:
    '{' { ub_act_dict_open(ctx, @1); }
    ;

typed_dictionary_list_opt:
    %empty
    | typed_dictionary_list stmtsep_opt
    ;

typed_dictionary_list:
    typed_dictionary_element
    | typed_dictionary_list stmtsep typed_dictionary_element
    ;

typed_dictionary_element:
    dict_elem_head typed_value { ub_act_dict_elem(ctx); }
    | dict_nested_head typed_dictionary
    ;

dict_elem_head:
    TOK_IDENT dict_key '=' { ub_act_dict_elem_begin(ctx, $1, false, $2, @1, @2); }
    | TOK_CXXIDENT dict_key '='
        { ub_act_dict_elem_begin(ctx, $1, false, $2, @1, @2); }
    | TOK_IDENT '[' ']' dict_key '='
        { ub_act_dict_elem_begin(ctx, $1, true, $4, @1, @4); }
    | TOK_CXXIDENT '[' ']' dict_key '='
        { ub_act_dict_elem_begin(ctx, $1, true, $4, @1, @4); }
    ;

dict_nested_head:
    TOK_DICTIONARY dict_key '=' { ub_act_dict_nested(ctx, $2, @2); }
    ;

dict_key:
    TOK_STRING
    | TOK_IDENT
    | TOK_CXXIDENT
    | keyword
    ;

string_dictionary:
    '{' newlines_opt string_dictionary_list_opt '}'
    ;

string_dictionary_list_opt:
    %empty
    | string_dictionary_list listsep_opt
    ;

string_dictionary_list:
    string_dictionary_element
    | string_dictionary_list listsep string_dictionary_element
    ;

string_dictionary_element:
    TOK_STRING ':' TOK_STRING
        { ub_act_push_path(ctx, $1, @1); ub_act_push_path(ctx, $3, @3); }
    ;

/* --- values ------------------------------------------------------------ */

metadata_listop_list:
    TOK_NONE { ub_act_meta_none(ctx, @1); }
    | typed_value_list
    ;

metadata_value:
    typed_dictionary { ub_act_meta_dict(ctx); }
    | typed_value
    | TOK_NONE { ub_act_meta_none(ctx, @1); }
    ;

typed_value:
    TOK_NUMBER { ub_vb_num(ctx, &$1, @1); }
    | TOK_STRING { ub_vb_str(ctx, $1, @1); }
    | TOK_IDENT { ub_vb_ident(ctx, $1, @1); }
    | TOK_CXXIDENT { ub_vb_ident(ctx, $1, @1); }
    | TOK_ASSET { ub_vb_asset(ctx, $1, @1); }
    | typed_value_tuple
    | typed_value_list
    | '[' ']' { ub_vb_empty_list(ctx, @1); }
    | TOK_PATHREF { ub_vb_path(ctx, $1, @1); }
    | TOK_TUPLES { ub_vb_tuples(ctx, $1, @1, true); }
    ;

typed_value_list:
    list_open typed_value_list_int ']' { ub_vb_list_close(ctx, @3); }
    ;

list_open:
    '[' { ub_vb_list_open(ctx, @1); }
    ;

typed_value_list_int:
    newlines_opt typed_value_list_items listsep_opt
    ;

typed_value_list_items:
    typed_value_list_item
    | typed_value_list_items listsep typed_value_list_item
    ;

typed_value_list_item:
    TOK_NUMBER { ub_vb_num(ctx, &$1, @1); }
    | TOK_STRING { ub_vb_str(ctx, $1, @1); }
    | TOK_IDENT { ub_vb_ident(ctx, $1, @1); }
    | TOK_CXXIDENT { ub_vb_ident(ctx, $1, @1); }
    | TOK_ASSET { ub_vb_asset(ctx, $1, @1); }
    | TOK_NUMLIST { ub_vb_numlist(ctx, $1, @1); }
    | TOK_TUPLES { ub_vb_tuples(ctx, $1, @1, false); }
    | typed_value_list
    | typed_value_tuple
    ;

typed_value_tuple:
    tuple_open typed_value_tuple_int ')' { ub_vb_tuple_close(ctx, @3); }
    ;

tuple_open:
    '(' { ub_vb_tuple_open(ctx, @1); }
    ;

typed_value_tuple_int:
    newlines_opt typed_value_tuple_items listsep_opt
    ;

typed_value_tuple_items:
    typed_value_tuple_item
    | typed_value_tuple_items listsep typed_value_tuple_item
    ;

typed_value_tuple_item:
    TOK_NUMBER { ub_vb_num(ctx, &$1, @1); }
    | TOK_STRING { ub_vb_str(ctx, $1, @1); }
    | TOK_IDENT { ub_vb_ident(ctx, $1, @1); }
    | TOK_CXXIDENT { ub_vb_ident(ctx, $1, @1); }
    | TOK_ASSET { ub_vb_asset(ctx, $1, @1); }
    | TOK_NUMLIST { ub_vb_numlist(ctx, $1, @1); }
    | TOK_TUPLES { ub_vb_tuples(ctx, $1, @1, false); }
    | typed_value_tuple
    ;

/* --- relationships ----------------------------------------------------- */

rel_type:
    TOK_REL { $$ = 0; }
    | TOK_CUSTOM TOK_REL { $$ = 1; }
    | TOK_CUSTOM TOK_VARYING TOK_REL { $$ = 3; }
    | TOK_VARYING TOK_REL { $$ = 2; }
    ;

rel_head:
    rel_type namespaced_name
        { ub_act_rel_begin(ctx, $1, $2, @2, UB_LO_EXPLICIT); }
    ;

listop_rel_head:
    listop_kw rel_type namespaced_name
        { ub_act_rel_begin(ctx, $2, $3, @3, $1); }
    ;

prim_relationship:
    rel_head relationship_assignment_opt relationship_metadata_list_opt
        { ub_act_prop_end(ctx); }
    | listop_rel_head relationship_assignment_opt { ub_act_prop_end(ctx); }
    | rel_head '[' TOK_PATHREF ']' { ub_act_prop_end(ctx); }
    | rel_head '.' TOK_TIME_SAMPLES '=' time_samples_rhs
        { ub_act_prop_end(ctx); }
    | rel_head '.' TOK_DEFAULT '=' TOK_PATHREF
        { ub_act_rel_default(ctx, $5, @5); }
    ;

relationship_metadata_list_opt:
    %empty
    | '(' newlines_opt ')'
    | '(' newlines_opt relationship_metadata_list stmtsep_opt ')'
    ;

relationship_metadata_list:
    relationship_metadata
    | relationship_metadata_list stmtsep relationship_metadata
    ;

relationship_metadata:
    TOK_STRING { ub_act_comment(ctx, $1, @1); }
    | meta_head metadata_value { ub_act_meta_end(ctx); }
    | listop_meta_head metadata_listop_list { ub_act_meta_end(ctx); }
    | TOK_DOC '=' TOK_STRING { ub_act_doc(ctx, $3, @1); }
    | TOK_PERMISSION '=' identifier { ub_act_permission(ctx, $3, @1, @3); }
    | TOK_SYMMETRYFUNCTION '=' identifier
        { ub_act_token_meta(ctx, $1, $3, @1, @3); }
    | TOK_SYMMETRYFUNCTION '='
        { ub_act_token_meta(ctx, $1, NULL, @1, @1); }
    ;

relationship_assignment_opt:
    %empty
    | '=' relationship_rhs { ub_act_targets(ctx); }
    ;

relationship_rhs:
    relationship_target
    | TOK_NONE { ub_act_none_list(ctx, @1); }
    | '[' newlines_opt ']' { ub_act_none_list(ctx, @3); }
    | '[' newlines_opt relationship_target_list listsep_opt ']'
    ;

relationship_target_list:
    relationship_target
    | relationship_target_list listsep relationship_target
    ;

relationship_target:
    TOK_PATHREF { ub_act_push_path(ctx, $1, @1); }
    ;

/* --- names ---------------------------------------------------------------- */

namespaced_name:
    TOK_IDENT
    | TOK_NSIDENT
    | keyword
    ;

identifier:
    TOK_IDENT
    | TOK_CXXIDENT
    ;

extended_number:
    TOK_NUMBER { $$ = ub_num_to_double(&$1); }
    | TOK_IDENT { $$ = ub_act_ident_number(ctx, $1, @1); }
    ;

keyword:
    TOK_ADD | TOK_APPEND | TOK_CLASS | TOK_CONFIG | TOK_CONNECT | TOK_CUSTOM
    | TOK_CUSTOMDATA | TOK_DEF | TOK_DEFAULT | TOK_DELETE | TOK_DICTIONARY
    | TOK_DISPLAYUNIT | TOK_DOC | TOK_INHERITS | TOK_KIND | TOK_NAMECHILDREN
    | TOK_NONE | TOK_OFFSET | TOK_OVER | TOK_PAYLOAD | TOK_PERMISSION
    | TOK_PREFIX_SUBSTITUTIONS | TOK_PREPEND | TOK_PROPERTIES
    | TOK_REFERENCES | TOK_RELOCATES | TOK_REL | TOK_REORDER | TOK_ROOTPRIMS
    | TOK_SCALE | TOK_SUBLAYERS | TOK_SUFFIX_SUBSTITUTIONS | TOK_SPECIALIZES
    | TOK_SYMMETRYARGUMENTS | TOK_SYMMETRYFUNCTION | TOK_TIME_SAMPLES
    | TOK_UNIFORM | TOK_VARIANTSET | TOK_VARIANTSETS | TOK_VARIANTS
    | TOK_VARYING
    ;

/* --- separators ------------------------------------------------------------ */

stmtsep_opt:
    %empty
    | stmtsep
    ;

stmtsep:
    ';' newlines_opt
    | newlines
    ;

listsep_opt:
    newlines_opt
    | listsep
    ;

listsep:
    ',' newlines_opt
    ;

newlines_opt:
    %empty
    | newlines
    ;

newlines:
    TOK_NL
    | newlines TOK_NL
    ;

%%

/* Token names as a user reads them ("'def'", "newline", "'='"). */
static const char *ub_sym_text(yysymbol_kind_t k, char *buf, size_t n)
{
    const char *s = yysymbol_name(k);
    if (k == YYSYMBOL_YYEOF)
        return "end of file";
    if (s[0] == '"') {
        size_t len = strlen(s);
        snprintf(buf, n, "%.*s", (int)(len - 2), s + 1);
        return buf;
    }
    return s;
}

static int yyreport_syntax_error(const yypcontext_t *yc, ub_pctx *ctx)
{
    yysymbol_kind_t expected[YYNTOKENS];
    int n = yypcontext_expected_tokens(yc, expected, YYNTOKENS);
    /* the split parse's own tokens are nothing a user can write */
    int kept = 0;
    for (int i = 0; i < n; i++)
        if (expected[i] != YYSYMBOL_TOK_SPLIT &&
            expected[i] != YYSYMBOL_TOK_START_TAIL &&
            expected[i] != YYSYMBOL_TOK_TAIL_END)
            expected[kept++] = expected[i];
    n = n < 0 ? n : kept;
    yysymbol_kind_t got = yypcontext_token(yc);
    const UB_YYLTYPE *loc = yypcontext_location(yc);
    char want[512] = "";
    size_t w = 0;
    if (n > 0 && n <= 8) {
        for (int i = 0; i < n; i++) {
            char b[64];
            const char *t = ub_sym_text(expected[i], b, sizeof b);
            int k = snprintf(want + w, sizeof want - w, "%s%s",
                             i == 0 ? "" : i == n - 1 ? " or " : ", ", t);
            if (k < 0 || (size_t)k >= sizeof want - w)
                break;
            w += (size_t)k;
        }
    }
    if (n > 8) {
        /* too many to list: say what kind of thing may come here */
        bool num = false, ident = false, str = false;
        for (int i = 0; i < n; i++) {
            num |= expected[i] == YYSYMBOL_TOK_NUMBER;
            ident |= expected[i] == YYSYMBOL_TOK_IDENT;
            str |= expected[i] == YYSYMBOL_TOK_STRING;
        }
        snprintf(want, sizeof want, "%s",
                 num     ? "a value"
                 : ident && str ? "a name, a string or a keyword"
                 : ident ? "a name"
                         : "something else");
        w = strlen(want);
    }
    char gb[64];
    const char *what = ub_sym_text(got, gb, sizeof gb);
    ub_act_syntax_error(ctx, *loc, got == YYSYMBOL_TOK_SYNERR, what,
                        w ? want : NULL);
    return 0;
}
