/*
 * ub_ident — the names a path may hold, as OpenUSD checks them: prim
 * names (UTF-8 identifiers, XID_Start XID_Continue*), property names
 * (identifiers joined by ':') and variant names, and the text of a path
 * made of them.  Every reader checks the names it reads with these: the
 * usda reader; the crate reader, whose names come from a table of strings
 * that damage can make anything; and the .usdb reader, whose checksums
 * catch damage but not a writer that put "a/b" where a prim name goes.
 */
#ifndef UB_IDENT_H
#define UB_IDENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether the n bytes at s are an identifier. */
bool ub_ident_ok(const char *s, size_t n);
/* Whether they are identifiers joined by ':' (a property name). */
bool ub_ident_ns_ok(const char *s, size_t n);
/* Whether they are an identifier, or ASCII identifiers joined by "::" (a
 * C++ name): what the text takes for a type or a metadata key. */
bool ub_ident_cxx_ok(const char *s, size_t n);
/* Whether they are such names, none a reserved word (ub_ident_keyword),
 * joined by '.': what the text takes for a prim's type name (`def a.B
 * "x"`). */
bool ub_ident_type_name_ok(const char *s, size_t n);
/* The length of the UTF-8 sequence at s (n bytes available), its code
 * point in *cp; 0 when it is malformed.  Only the lead byte's pattern and
 * the continuation bytes are checked, as OpenUSD reads strings and asset
 * paths (not the shortest form: names are held to that, by ub_ident_ok). */
size_t ub_utf8_seq(const unsigned char *s, size_t n, uint32_t *cp);
/* Why the n bytes at s are no asset path (not UTF-8, or a control
 * character), as OpenUSD refuses them; NULL when they are one.  The usda,
 * .usdb and crate readers hold the asset paths they read to it, and
 * stitch those it makes. */
const char *ub_ident_asset_problem(const char *s, size_t n);
/* The words the text reserves, in the order of parser.y's keyword tokens
 * ("add" ... "varying"): no name the grammar reads as an identifier (a
 * type name, a metadata key) may be one. */
#define UB_IDENT_NKEYWORDS 41
extern const char *const ub_ident_keywords[UB_IDENT_NKEYWORDS];
/* Whether s[0..n) is one of them. */
bool ub_ident_keyword(const char *s, size_t n);
/* Whether s[0..n) is an attribute's type name the text can say: an
 * identifier or a C++ name, not a reserved word. */
bool ub_ident_attr_type_ok(const char *s, size_t n);
/* Whether the string s is an absolute path of prim names, without
 * variant selections ("/World/model"), as a command line names a prim. */
bool ub_ident_prim_path_ok(const char *s);
/* Whether the string s is a path at all (ub_ident_path_split takes it). */
bool ub_ident_path_ok(const char *s);
/* Whether it is a path OpenUSD's path grammar takes, which also has
 * mapper (`/A.b.mapper[/C.d]`, with an optional `.arg`) and expression
 * (`/A.b.expression`) paths, and a target after a relational attribute
 * (`/A.b[/C].d[/E]`): forms no usda rule has a use for, but which a
 * value kept as written (a relationship's sample) may hold. */
bool ub_ident_any_path_ok(const char *s);
/* Whether s is the text a path kept as written may hold: such a path, or
 * empty (the empty path, which OpenUSD reads any other text as). */
bool ub_ident_path_value_ok(const char *s);
/* Whether the string s is a path the text takes as a relationship's
 * target or an attribute's connection, as it holds one once read: an
 * absolute prim or property path, not the root, without "..", variant
 * selections or a target at its end ("/A.rel[/B]"). */
bool ub_ident_target_path_ok(const char *s);
/* Whether they are a variant or variant set name. */
bool ub_ident_variant_ok(const char *s, size_t n);

/* The end of the variant selection "{set=sel}" that starts at s[i] (the
 * index after its '}'), or 0 when there is none there: set is a variant
 * set name, not "", sel a variant name or "".  The usda reader's paths
 * and the crate reader's path elements are held to it alike. */
size_t ub_ident_variant_sel(const char *s, size_t n, size_t i);

/* The index of the ']' that closes the '[' at s[i] (a target path's
 * brackets nest), or n when none does. */
size_t ub_ident_close_bracket(const char *s, size_t n, size_t i);

/* Path s[0..n) without its variant selections ("/A{v=x}B.c" is "/A/B.c")
 * into out, which has room for n + 1 bytes and may be s itself; returns
 * the length written (out is NUL-terminated). */
size_t ub_ident_strip_variants(char *out, const char *s, size_t n);

/* A path's text split the way the usda rules need it: prim components
 * (".." or a name, each possibly followed by variant selections) and the
 * property part after the prim part, kept as text.  As many components as
 * prims may nest (UB_MAX_NESTING), and a few more for "..": a layer can
 * target any prim it holds.  Target paths nest in target paths
 * ("/A.r[/B.r[/C]]") up to UB_PATH_MAX_TARGETS deep: each level is split
 * again, and no limit let a crafted path cost its length times its depth,
 * and a stack frame a level. */
#define UB_PATH_MAX_COMPS 1024
#define UB_PATH_MAX_TARGETS 32
typedef struct ub_pathinfo {
    bool absolute;
    bool variant_sel;   /* has a variant selection */
    bool has_prop;      /* names a property */
    bool is_target;     /* ends in a [target]: a property's target, no
                           property of its own */
    uint32_t n;
    const char *comp[UB_PATH_MAX_COMPS];
    uint32_t len[UB_PATH_MAX_COMPS];
    const char *prop;   /* ".name..." or NULL */
    uint32_t prop_len;
} ub_pathinfo;

/* Split the n bytes at s into *pi; false when they are no path. */
bool ub_ident_path_split(const char *s, size_t n, ub_pathinfo *pi);

#endif
