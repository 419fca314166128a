/*
 * ub_parse_int — private interface between the usda scanner (lexer.l), the
 * grammar (parser.y) and the actions that build the layer (ub_parse.c).
 * Not installed.
 */
#ifndef UB_PARSE_INT_H
#define UB_PARSE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ub_ident.h"
#include "ub_metadef.h"
#include "ub_parse.h"

/* A number token, as the scanner read it: integers stay exact until the
 * declared type is known (OpenUSD keeps uint64 / int64 / double too). */
enum { UB_NUM_U64 = 0, UB_NUM_I64 = 1, UB_NUM_DBL = 2 };
typedef struct ub_num {
    uint8_t kind;
    union {
        uint64_t u;
        int64_t i;
        double d;
    } v;
} ub_num;

/* Token location: where the token starts (that is all a diagnostic needs;
 * keeping two ints instead of four makes every reduction cheaper). */
typedef struct ub_span {
    const char *p;
    size_t n;
} ub_span;

typedef struct ub_tokloc {
    uint32_t line, col;
} ub_tokloc;

#define UB_YYLTYPE ub_tokloc
#define UB_YYLTYPE_IS_DECLARED 1

/* Value builder: turns the atom / tuple / list events of one value into a
 * contiguous array of the declared type, or into an untyped tree. */
typedef struct ub_untyped_frame {
    ub_untyped_kind kind;
    uint32_t start; /* index of the first child in the node stack */
} ub_untyped_frame;

typedef struct ub_vb {
    const ub_type *type; /* NULL: untyped */
    const char *type_name; /* for messages */
    bool want_array;
    bool failed;
    bool saw_list;
    unsigned ncomp, rows, cols, depth_needed;
    size_t csize; /* bytes per component */
    unsigned char *buf;
    size_t len, cap; /* bytes */
    uint32_t nelem;
    unsigned comp, row_comp, rows_done; /* position inside one element */
    int list_depth, tuple_depth;
    /* untyped trees */
    ub_untyped *nodes;
    uint32_t nnodes, capnodes;
    ub_untyped_frame frames[64];
    int nframes;
} ub_vb;

typedef struct ub_dictframe {
    /* The entries read so far, in malloc'd memory kept for the next
     * dictionary at this depth: the arena copy, made when the dictionary
     * closes, is of exact size (most have a handful of entries, and a
     * growing arena array would leave its slack and old blocks behind). */
    ub_dict d;
    const char *key;      /* key of this dictionary in its parent */
    ub_tokloc key_loc;
} ub_dictframe;

/* Growable scratch list of pointers / references used while one list op
 * or list is being read. */
typedef struct ub_plist {
    const char **v;
    ub_tokloc *loc;
    uint32_t n, cap;
} ub_plist;

typedef struct ub_rlist {
    ub_reference *v;
    uint32_t n, cap;
} ub_rlist;


typedef struct ub_pctx {
    void *scanner;
    ub_layer *layer;
    ub_strtab *strtab;
    ub_arena *arena;
    ub_diags *diags;
    const char *path; /* the layer's path pointer, used in every ub_loc */
    uint32_t file_id; /* path's index in the string table's file table */
    const char *src;
    size_t src_len, src_pos;
    bool src_mapped;    /* ub_parse_usda_mapped: read pages may be dropped */
    size_t src_dropped; /* text before this offset has been dropped */
    /* ub_parse_opts.read_text: NULL, or the scanner reads through it */
    ub_read_text_fn *read_text;
    void *read_ctx;
    uint32_t line, col; /* scanner position */
    int nerrors;
    const char *lex_error; /* detail for a SYNERR token */
    ub_tokloc comment_at;  /* where the last block comment began */
    bool cookie_seen;

    /* keywords, interned once so keyword tokens carry their text free */
    const char *kw[64];

    /* where we are */
    ub_prim *prim;     /* current prim (or variant body); root at top */
    ub_prop *prop;     /* current property */
    int spec;          /* UB_SPEC_* of the metadata being read */
    ub_fields *meta;   /* where metadata goes; NULL: meta_prop's */
    ub_prop *meta_prop; /* a property's list is out of line (ub_parse.c) */
    ub_fields ms;      /* scratch copy of one metadata list (ub_parse.c) */
    ub_fields *ms_owner; /* whose copy: a list, */
    ub_prop *ms_owner_prop; /* or (ms_owner NULL) a property's */
    uint32_t ms_cap;
    bool ms_dirty;
    ub_prop **ps;      /* scratch property list of ps_owner (ub_parse.c) */
    ub_prim *ps_owner;
    uint32_t ps_cap;
    int listop;        /* ub_listop_part of the statement being read */

    /* generic metadata being read */
    const char *meta_key;
    ub_tokloc meta_loc;
    int meta_kind; /* how meta_key's value is stored (see ub_parse.c) */
    const ub_metadef *meta_def; /* meta_key's field, when it is typed */

    ub_vb vb;
    ub_dictframe *dstack; /* open dictionaries, innermost last */
    int ndict, capdict;
    const ub_type *elem_type; /* dictionary element being read */
    const char *elem_key;
    ub_tokloc elem_loc;

    ub_plist paths;  /* path / string lists */
    ub_rlist refs;   /* references / payloads */
    bool refs_refused; /* an item of refs was refused (and said) */
    ub_reference cur_ref;
    bool in_ref;
    ub_dict *cur_ref_dict;

    ub_offset cur_offset;
    bool cur_has_offset, cur_has_scale;

    /* time samples */
    double sample_time;

    /* attribute / relationship declaration being read */
    const ub_type *decl_type;
    const char *decl_name; /* type name as stored (canonical or legacy) */
    bool decl_array;
    int decl_var;
    int prop_part;         /* list op of `prepend rel r = ...` etc. */
    bool none_list;        /* `None` given for a list */
    ub_tokloc none_loc;

    /* generic metadata */
    const ub_type *meta_type;
    bool meta_array;
    int meta_part;
    bool meta_done; /* value already stored (dictionary or None) */
    ub_dict *last_dict; /* the outermost dictionary just closed */
    ub_prim *vset_owner;
    const char *vset_name;
    ub_tokloc vset_loc;
    ub_tokloc variants_loc;

    void *oom; /* jmp_buf * for out-of-memory escapes from the scanner */

    /* split parse (ub_parse.c, "split parse"): the head reads text up to
     * src_end while a second thread reads the tail from there */
    size_t src_end;         /* the scanner reads text[src_pos..src_end) */
    int split_role;         /* UB_SPLIT_NONE / _HEAD / _TAIL */
    int lex_hook;           /* UB_LEX_*: the scanner's next call is special */
    bool tail_eof_nl;       /* tail: the extra newline at the end was sent */
    bool tail_end_sent;     /* tail: TOK_TAIL_END was sent */
    bool tail_nl_missing;   /* tail: a `}` not followed by a newline yet */
    struct ub_split *split;
    ub_prim **ph;           /* tail: the enclosing levels, innermost first */
    uint32_t nph, capph;
    /* how deep the prim open now is (the root: 0; a tail counts from its
     * innermost level, and its placeholders do not count), and, in a tail,
     * the deepest prim relative to the level the tail began in */
    int depth, tail_max_depth;
    bool stopped;           /* a fatal error: the rest is not read */

    /* streaming (ub_parse_opts.stream): the arena mark taken as each open
     * streamed prim began, innermost last */
    const ub_parse_stream *stream;
    void (*progress)(void *ctx, size_t bytes_read);
    void *progress_ctx;
    ub_arena_mark *marks;
    uint32_t nmarks, capmarks;

    /* components while making a path absolute: anchor + relative part */
    const char *pcomp[2 * UB_PATH_MAX_COMPS];
    uint32_t plen[2 * UB_PATH_MAX_COMPS];
    /* a relative path's targets, split one level each (ub_path_abs_in),
     * malloc'd the first time a level is needed (not in the arena: a
     * streamed parse gives a prim's arena memory back) */
    ub_pathinfo *target_pi[UB_PATH_MAX_TARGETS];

    /* ub_parse_intern's cache: a string with its hash and length, which
     * tell a miss without a look at the string (a cache miss itself) */
#define UB_ICACHE 1024
    struct ub_icache {
        const char *s;
        uint32_t hash, len;
    } icache[UB_ICACHE];

    /* lookups by interned pointer: type names and metadata keys */
#define UB_TYPE_CACHE 61
#define UB_FIELD_CACHE 61
    struct {
        const char *name, *stored;
        const ub_type *type;
    } tcache[UB_TYPE_CACHE];
    struct {
        const char *key;
        int spec;
        const ub_metadef *def;
    } fcache[UB_FIELD_CACHE];
    /* plugins' metadata fields (ub_parse_opts), as the parser reads them */
    ub_metadef *xdefs;
    size_t n_xdefs;

    /* strings a NUL byte cut short, and where (ub_parse_unescape): a name
     * so cut is refused, as OpenUSD finds the NUL in it */
    struct ub_nul_cut *nuls;
    uint32_t nnuls, capnuls;

    /* scanner: open brackets (number lists are tokens inside [ and ( only)
     * and two buffers for number-list text, used in turn: a token's text
     * must survive while the next token is the parser's lookahead */
    char brk[256];
    int nbrk;
    char *nl_buf[2];
    size_t nl_cap[2];
    int nl_i;
    /* ...and each run's numbers, read as the scanner found the run's end
     * (the fast paths of ub_vb_numlist and ub_vb_tuples take them from
     * here instead of reading the text a second time): nl_nums[i] holds
     * nl_n[i] numbers of the run in nl_buf[i], nl_arity[i] numbers to
     * each of its tuples (0 when the tuples differ) */
    ub_num *nl_nums[2];
    size_t nl_nums_cap[2];
    size_t nl_n[2];
    unsigned nl_arity[2];
} ub_pctx;

/* The number at p (ub_parse.c): its value in *out and the text after it;
 * NULL when there is none or it may go on past end (NULL end: p is inside
 * a token's text). */
const char *ub_num_scan(const char *p, const char *end, ub_num *out);

/* Scanner (lexer.l). */
int ub_lex_init(ub_pctx *ctx);
void ub_lex_destroy(ub_pctx *ctx);
/* Read on from src_pos after the scanner reported the end of its input. */
void ub_lex_restart(ub_pctx *ctx);

/* Split parse (ub_parse.c).  Roles of a parse context: */
enum { UB_SPLIT_NONE = 0, UB_SPLIT_HEAD, UB_SPLIT_TAIL };
/* lex_hook: what the scanner does first on its next call */
enum { UB_LEX_PLAIN = 0, UB_LEX_START_TAIL, UB_LEX_STOP };
/* What ub_split_eof tells the scanner at the end of its input: a token to
 * return (0: the end), or to read on from src_pos. */
#define UB_SPLIT_READ_ON (-1)
int ub_split_eof(ub_pctx *ctx, bool at_statement);

/* The text ends inside a block comment (at ctx->comment_at): said with a
 * warning, since OpenUSD takes the rest of the layer for comment without
 * a word. */
void ub_lex_comment_eof(ub_pctx *ctx);
bool ub_split_cancelled(const ub_pctx *ctx);

/* Number parsing shared with the scanner: correctly rounded. */
double ub_parse_double(const char *s, size_t n);

/* s[0..n) interned (NULL: out of memory).  Names and strings repeat (type
 * names, property names, metadata keys, a value every prim has): a small
 * direct-mapped cache in front of the session's string table keeps most
 * lookups out of its big, cache-cold hash table, and out of its locks
 * while a split parse runs. */
const char *ub_parse_intern(ub_pctx *ctx, const char *s, size_t n);
/* Unescape a quoted string or path body as OpenUSD does and intern it.
 * A NUL byte ends it; with had_nul NULL that is said (a warning) and
 * remembered (ub_parse_nul_cut), else *had_nul tells and nothing is said. */
const char *ub_parse_unescape(ub_pctx *ctx, const char *s, size_t n,
                              ub_tokloc l, bool *had_nul);
/* The scanner's next block: n bytes of text from src_pos into buf. */
void ub_parse_take_text(ub_pctx *ctx, char *buf, size_t n);

/* Report an error at loc; parsing continues, the layer will be dropped. */
void ub_perr(ub_pctx *ctx, ub_tokloc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
