/*
 * ub_parse — the usda text reader: a reentrant flex scanner and a pure
 * bison parser with locations, building a ub_layer.
 */
#ifndef UB_PARSE_H
#define UB_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ub_diag.h"
#include "ub_intern.h"
#include "ub_layer.h"

/* Parse text[0..len) (need not be NUL-terminated), read from `path`, into
 * a new layer whose strings are interned in t.  On success returns the
 * layer (its `source` points at text, which the caller keeps alive for as
 * long as it wants later diagnostics to quote lines).  On failure returns
 * NULL and appends at least one located UB_ERROR to diags; no partial layer
 * is ever returned. */
ub_layer *ub_parse_usda(ub_strtab *t, const char *path, const char *text,
                        size_t len, ub_diags *diags);

/* ub_parse_usda for text that is a read-only mapping of a file (mmap,
 * PROT_READ): pages already read are given back to the kernel as parsing
 * goes, so a big layer's text does not stay resident next to its model.
 * The mapping stays valid; a later read of it faults the file back in. */
ub_layer *ub_parse_usda_mapped(ub_strtab *t, const char *path,
                               const char *text, size_t len, ub_diags *diags);

/* Streaming (ub_parse_opts.stream, below): hand each prim over as soon as
 * its body closes, so that a layer far bigger than memory can be read.  prim_done is called for every
 * prim that is not inside a variant, children before their parent, with
 * depth 1 for root prims; the prim's own children have already been handed
 * over and are stubs (see ub_prim_drop_body).  After prim_done returns, the
 * prim becomes a stub too and its memory is reused.  It is not called once
 * the layer has an error (the layer will not be returned).  The layer
 * returned has `streamed` set: the pseudo-root keeps the layer metadata,
 * sublayers, rootPrims order and the stubs of the root prims. */
typedef struct ub_parse_stream {
    void (*prim_done)(void *ctx, const ub_layer *layer, const ub_prim *prim,
                      unsigned depth);
    /* Optional: a property or reorder statement of prim (the pseudo-root
     * for `reorder rootPrims`) comes after one of its children was handed
     * over -- text that belongs before the children. */
    void (*prim_reopened)(void *ctx, const ub_prim *prim);
    void *ctx;
    /* The parse may be split as a whole-layer parse is (below): the head
     * streams the first half as it reads, the tail reads the second half
     * into a model of its own, which is handed over prim by prim once
     * the head is done.  As fast as a whole-layer parse, in the memory of
     * half a layer's model; the same prims, in the same order.  But when
     * the head must give up (an error or a warning before the split: the
     * layer is read again by one thread, for the serial diagnostics), the
     * layer comes back whole, not `streamed`, after the stream had some
     * of its prims: the caller drops what the stream got and uses the
     * layer. */
    bool two_threads;
    /* Optional, with two_threads: the share of the text the head reads,
     * in percent (0: half).  The head's thread also runs prim_done, so
     * a stream whose work is heavy gives the tail more. */
    unsigned head_percent;
    /* Optional, with two_threads: the number of threads the parse keeps
     * busy from now on -- 2 once the tail's thread starts, 1 once it has
     * ended (which the head sees as it takes its next block of text, or
     * at its end, so that prim_done may still come for head prims after
     * it); called on the head's thread, before the first prim_done and
     * before the tail's first.  A stream that hands its work to a thread
     * of its own can do it on the calling thread instead while every CPU
     * is taken. */
    void (*parse_threads)(void *ctx, unsigned n);
    /* Optional, with two_threads: called on the tail's thread as it takes
     * each block of text (256 KiB); ahead: it has read a larger share of
     * its text than the head has of its own (they started together), so
     * that it would end first and its CPU then idle.  A stream whose
     * prim_done leaves work to be done later can have the tail do some of
     * it while it is ahead; the stream keeps the threads apart itself. */
    void (*tail_pace)(void *ctx, bool ahead);
    /* Optional, with two_threads: where the tail's memory goes as its
     * prims are handed over (ub_arena_set_pages), for the stream to take
     * as it grows (NULL: back to the system). */
    struct ub_pages *pages;
} ub_parse_stream;

/* Big layers are read by two threads ("split parse"): ub_parse_usda and
 * ub_parse_usda_mapped split a layer of 8 MiB or more at a line near its
 * middle that begins with def, over or class when two CPUs are online.
 * The result -- layer, locations, diagnostics -- is always exactly the
 * one a single thread gives (where the split does not fit, the parse
 * falls back to reading on alone, or to a serial parse).  While it runs,
 * the string table is made concurrent (ub_strtab_set_concurrent).  The
 * options make the choice explicit (tests): */
enum {
    UB_PARSE_SERIAL = 0,      /* one thread */
    UB_PARSE_SPLIT_GRAFTED,   /* two threads, the second half grafted */
    UB_PARSE_SPLIT_READ_ON,   /* the first thread read on past the split */
    UB_PARSE_SPLIT_REPARSED,  /* an error before the split: parsed again
                                 by one thread */
};

/* A metadata field declared outside Sdf's schema (a plugin's plugInfo.json
 * "SdfMetadata"): the parser reads it as known metadata of its type, where
 * it applies.  Fields Sdf or usdbake already know keep their own type. */
enum {
    UB_APPLIES_LAYERS = 1,
    UB_APPLIES_PRIMS = 2,
    UB_APPLIES_ATTRIBUTES = 4,
    UB_APPLIES_RELATIONSHIPS = 8,
    UB_APPLIES_VARIANTS = 16,
    UB_APPLIES_ALL = 31,
};
typedef struct ub_meta_field {
    const char *name;       /* interned in the parse's table */
    const char *type_name;  /* "double", "timecode[]", "intlistop",
                               "dictionary", ... */
    unsigned applies_to;    /* UB_APPLIES_* bits */
    const char *plugin;     /* who declares it (for messages) */
    ub_loc loc;             /* where */
} ub_meta_field;

/* Reads n bytes of a layer's text from offset `at` into buf: 0, else -1
 * (ub_parse_opts.read_text). */
typedef int ub_read_text_fn(void *ctx, void *buf, size_t n, uint64_t at);

typedef struct ub_parse_opts {
    bool mapped;     /* as ub_parse_usda_mapped */
    /* Optional, with mapped: reads n bytes of the text from offset `at`
     * into buf, returning 0 (else -1: the text is read instead), from any
     * thread of the parse -- the mapped file's pread(2).  The scanner then
     * takes its blocks through it, and never touches the mapping's pages
     * (where the first touch of each page costs more than the copy, as
     * on the virtual machines usdbake is measured on: doc/design.md). */
    ub_read_text_fn *read_text;
    void *read_ctx;
    int split;       /* 0: by size and CPUs; > 0: split at the first
                        candidate line at or after split_at, whatever the
                        size; < 0: never (a crate layer the loader reads
                        takes it as ub_crate_stream.split) */
    size_t split_at;
    int outcome;     /* set: UB_PARSE_* */
    /* Stream the prims (see ub_parse_stream); a streaming parse is
     * split only when the stream allows (two_threads). */
    const ub_parse_stream *stream;
    /* Called now and then, from the calling thread, with the bytes of text
     * read so far (both threads' of a split parse), and with len at the end
     * of a successful parse: for a progress bar. */
    void (*progress)(void *ctx, size_t bytes_read);
    void *progress_ctx;
    /* Metadata fields plugins declare (not owned; NULL: none). */
    const ub_meta_field *fields;
    size_t n_fields;
} ub_parse_opts;

/* ub_parse_usda with options (opts may be NULL). */
ub_layer *ub_parse_usda_opts(ub_strtab *t, const char *path,
                             const char *text, size_t len,
                             ub_parse_opts *opts, ub_diags *diags);

/* Where a split parse would split text: the start of the first line
 * beginning at or after offset `from` whose first word is def, over or
 * class followed by a blank; len when there is none. */
size_t ub_parse_split_point(const char *text, size_t len, size_t from);

/* Whether text begins like a usda layer ("#usda " or the legacy "#sdf "). */
int ub_parse_is_usda(const char *text, size_t len);

#endif
