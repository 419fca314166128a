/*
 * ub_diag — diagnostics as values.
 *
 * Library code never prints and never exits: it appends a ub_diag to the
 * caller's ub_diags and returns failure.  Each diagnostic carries its
 * location and a copy of the source line, so the command line can print
 * `file:line:col: error: message`, the line and a caret without reopening
 * anything, and `--format json` can print the same facts.
 */
#ifndef UB_DIAG_H
#define UB_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum ub_severity {
    UB_NOTE = 0,
    UB_WARNING = 1,
    UB_ERROR = 2,
} ub_severity;

/* A position in a source file; line and column are 1-based, column counts
 * bytes.  line 0 means "the file as a whole". */
typedef struct ub_loc {
    const char *file; /* interned or static; never freed through a loc */
    uint32_t line, col;
} ub_loc;

/* The location a model record stores (a field, dictionary entry, list-op
 * part, property, prim...): 8 bytes where an ub_loc takes 16, as a layer
 * holds one per record.  Its file is an index into the file table of the
 * string table (ub_intern.h) every layer of a run shares, so a record
 * copied or shared between layers keeps its meaning.  Read and made only
 * through ub_strtab_loc / ub_strtab_sloc (ub_layer_loc / ub_layer_sloc);
 * all zero is {NULL, 0, 0}.
 *
 * Two layouts share the 63 bits below the tag (bit 63, 0).  The first
 * UB_SLOC_WIDE_FIRST - 1 files take the narrow one: column in bits 0..19,
 * line 20..46, file index 47..62.  Later files -- a bake of a
 * file-per-frame cache meets hundreds of thousands of small ones -- take
 * the wide one, marked by bits 59..62 all set (a narrow index never
 * sets them): column 0..14, line 15..38, and the index less
 * UB_SLOC_WIDE_FIRST in 39..58.  A column or line too large for its
 * layout saturates; a file the table has no room for (UB_SLOC_FILES
 * already there, or out of memory) gets UB_SLOC_FILE_UNKNOWN, which reads
 * as the file "(unknown file)": never another file's name.  With bit 63
 * set, bits 0..62 are the file pointer of a location without line and
 * column: it takes no table entry.  With bits 63 and 62 set (no pointer
 * sets bit 62), the location names a spec of a crate layer, which has no
 * lines: bits 40..59 the index of its path tree in the string table,
 * bits 0..39 the path's (ub_specloc.h); it reads as the file
 * "file:</path>". */
typedef struct ub_sloc {
    uint64_t bits;
} ub_sloc;

#define UB_SLOC_COL_BITS 20
#define UB_SLOC_LINE_BITS 27
#define UB_SLOC_FILE_BITS 16
#define UB_SLOC_MAX_COL ((1u << UB_SLOC_COL_BITS) - 1)
#define UB_SLOC_MAX_LINE ((1u << UB_SLOC_LINE_BITS) - 1)
_Static_assert(UB_SLOC_COL_BITS + UB_SLOC_LINE_BITS + UB_SLOC_FILE_BITS == 63,
               "an ub_sloc is 63 bits and a tag");
#define UB_SLOC_WIDE_MARK (UINT64_C(0xf) << 59)
#define UB_SLOC_WIDE_FIRST 0xf000u /* the first index of the wide layout */
#define UB_SLOC_WIDE_COL_BITS 15
#define UB_SLOC_WIDE_LINE_BITS 24
#define UB_SLOC_WIDE_FILE_BITS 20
#define UB_SLOC_WIDE_MAX_COL ((1u << UB_SLOC_WIDE_COL_BITS) - 1)
#define UB_SLOC_WIDE_MAX_LINE ((1u << UB_SLOC_WIDE_LINE_BITS) - 1)
_Static_assert(UB_SLOC_WIDE_COL_BITS + UB_SLOC_WIDE_LINE_BITS +
                       UB_SLOC_WIDE_FILE_BITS == 59,
               "a wide ub_sloc is 59 bits, a mark and a tag");
/* the last wide index, all ones: no file's */
#define UB_SLOC_FILE_UNKNOWN \
    (UB_SLOC_WIDE_FIRST + (1u << UB_SLOC_WIDE_FILE_BITS) - 1)
#define UB_SLOC_FILES (UB_SLOC_FILE_UNKNOWN - 1) /* indexes 1.. */
#define UB_SLOC_UNKNOWN_FILE "(unknown file)"

static inline bool ub_sloc_wide(ub_sloc s)
{
    return (s.bits & (UINT64_C(1) << 63 | UB_SLOC_WIDE_MARK)) ==
           UB_SLOC_WIDE_MARK;
}

/* The file index of a stored location (0: none), when bit 63 is 0. */
static inline uint32_t ub_sloc_file(ub_sloc s)
{
    if (ub_sloc_wide(s))
        return UB_SLOC_WIDE_FIRST +
               ((uint32_t)(s.bits >> (UB_SLOC_WIDE_COL_BITS +
                                      UB_SLOC_WIDE_LINE_BITS)) &
                ((1u << UB_SLOC_WIDE_FILE_BITS) - 1));
    return (uint32_t)(s.bits >> (UB_SLOC_COL_BITS + UB_SLOC_LINE_BITS));
}

/* The line of a stored location (0: none), without its file. */
static inline uint32_t ub_sloc_line(ub_sloc s)
{
    if (s.bits >> 63)
        return 0;
    if (ub_sloc_wide(s))
        return (uint32_t)(s.bits >> UB_SLOC_WIDE_COL_BITS) &
               UB_SLOC_WIDE_MAX_LINE;
    return (uint32_t)(s.bits >> UB_SLOC_COL_BITS) & UB_SLOC_MAX_LINE;
}

/* The column of a stored location (0: none), when bit 63 is 0. */
static inline uint32_t ub_sloc_col(ub_sloc s)
{
    if (ub_sloc_wide(s))
        return (uint32_t)s.bits & UB_SLOC_WIDE_MAX_COL;
    return (uint32_t)s.bits & UB_SLOC_MAX_COL;
}

#define UB_SLOC_PTR (UINT64_C(1) << 63)
#define UB_SLOC_SPEC (UINT64_C(1) << 62)
#define UB_SLOC_TREE_BITS 20
#define UB_SLOC_PATH_BITS 40
#define UB_SLOC_TREES ((1u << UB_SLOC_TREE_BITS) - 1) /* indexes 1.. */

/* Whether s names a crate layer's spec (ub_sloc_spec): no line, no
 * column, its file's text made only when read. */
static inline bool ub_sloc_is_spec(ub_sloc s)
{
    return (s.bits & (UB_SLOC_PTR | UB_SLOC_SPEC)) ==
           (UB_SLOC_PTR | UB_SLOC_SPEC);
}

/* The stored form of the location of path `path` of path tree `tree`
 * (ub_strtab_add_spec_tree). */
static inline ub_sloc ub_sloc_spec(uint32_t tree, uint64_t path)
{
    return (ub_sloc){UB_SLOC_PTR | UB_SLOC_SPEC |
                     (uint64_t)tree << UB_SLOC_PATH_BITS |
                     (path & ((UINT64_C(1) << UB_SLOC_PATH_BITS) - 1))};
}

/* The stored form of file index `file` (0: no file; from
 * ub_strtab_file_id), line and col, saturating. */
static inline ub_sloc ub_sloc_make(uint32_t file, uint32_t line, uint32_t col)
{
    if (file >= UB_SLOC_WIDE_FIRST) {
        uint64_t l =
            line < UB_SLOC_WIDE_MAX_LINE ? line : UB_SLOC_WIDE_MAX_LINE;
        uint64_t c = col < UB_SLOC_WIDE_MAX_COL ? col : UB_SLOC_WIDE_MAX_COL;
        return (ub_sloc){UB_SLOC_WIDE_MARK |
                         (uint64_t)(file - UB_SLOC_WIDE_FIRST)
                             << (UB_SLOC_WIDE_COL_BITS +
                                 UB_SLOC_WIDE_LINE_BITS) |
                         l << UB_SLOC_WIDE_COL_BITS | c};
    }
    uint64_t l = line < UB_SLOC_MAX_LINE ? line : UB_SLOC_MAX_LINE;
    uint64_t c = col < UB_SLOC_MAX_COL ? col : UB_SLOC_MAX_COL;
    return (ub_sloc){(uint64_t)file << (UB_SLOC_COL_BITS + UB_SLOC_LINE_BITS) |
                     l << UB_SLOC_COL_BITS | c};
}

typedef struct ub_diag {
    ub_severity severity;
    ub_loc loc;
    const char *id;        /* stable check ID ("offset-scale-zero"), or NULL */
    const char *message;   /* what is wrong, and what was expected */
    const char *hint;      /* how to fix it, or NULL */
    const char *line_text; /* the source line without its newline, or NULL */
    bool out_of_memory;    /* ub_diag_add_oom's */
    size_t seq;            /* the order it was added in */
} ub_diag;

typedef struct ub_diags ub_diags;

ub_diags *ub_diags_new(void);
void ub_diags_free(ub_diags *d);

size_t ub_diags_count(const ub_diags *d);
const ub_diag *ub_diags_at(const ub_diags *d, size_t i);
/* The errors (warnings) added, kept or not: see ub_diags_lost. */
size_t ub_diags_errors(const ub_diags *d);
size_t ub_diags_warnings(const ub_diags *d);
/* How many diagnostics could not be kept because memory ran out (they
 * count in ub_diags_errors and ub_diags_warnings all the same, so that
 * a failure is never taken for success; whoever prints the list says
 * that some are missing, and why). */
size_t ub_diags_lost(const ub_diags *d);

/* Append a diagnostic.  src/src_len, when given, is the text of loc.file;
 * the line loc.line is copied out of it for quoting.  Returns the stored
 * diagnostic (so a caller may attach a hint), or NULL when out of memory. */
ub_diag *ub_diag_add(ub_diags *d, ub_severity sev, ub_loc loc, const char *id,
                     const char *src, size_t src_len, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
ub_diag *ub_diag_addv(ub_diags *d, ub_severity sev, ub_loc loc,
                      const char *id, const char *src, size_t src_len,
                      const char *fmt, va_list ap);
void ub_diag_set_hint(ub_diags *d, ub_diag *diag, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* An error saying memory ran out ("out of memory reading '%s'"), marked
 * as such: whatever is reported after it may follow from it
 * (ub_diags_first_oom). */
ub_diag *ub_diag_add_oom(ub_diags *d, ub_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The order number (ub_diag.seq) of the first out-of-memory error, or
 * SIZE_MAX when there is none. */
size_t ub_diags_first_oom(const ub_diags *d);

/* Whether a diagnostic with this id is already kept at exactly loc: for a
 * problem of one place that many arcs run into, said once (a scan: call
 * it only once the problem is found). */
bool ub_diags_has(const ub_diags *d, const char *id, ub_loc loc);

/* Move all of src's diagnostics to the end of dst (src is left empty). */
void ub_diags_take(ub_diags *dst, ub_diags *src);

/* Stable order for output: by file, line, column, then insertion. */
void ub_diags_sort(ub_diags *d);

/* The compiler-style text form:
 *   file:line:col: error: message [id]
 *       the source line
 *       ^
 *   note: hint
 * Writing is the caller's choice of stream; the library itself never calls
 * this on stdout or stderr. */
void ub_diag_print(FILE *out, const ub_diag *diag);

#endif
