/*
 * ub_loader — finds, reads and parses layers, each once.
 *
 * Asset paths are resolved relative to the layer that names them, then
 * along the search path.  Every layer opened is kept (and shared) until the
 * loader is freed, so a stack that names one layer twice parses it once,
 * and `--deps` can list exactly what was read.  A pass that reads many
 * layers one after the other (value clips) opens them transiently and
 * gives each back when it is done with it, so memory holds one at a time.
 */
#ifndef UB_LOADER_H
#define UB_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ub_diag.h"
#include "ub_intern.h"
#include "ub_layer.h"
#include "ub_parse.h"

typedef struct ub_loader ub_loader;

/* diags receives every loading and parsing error; t interns all layers'
 * strings.  Both must outlive the loader. */
ub_loader *ub_loader_new(ub_strtab *t, ub_diags *diags);
/* Frees every layer the loader read. */
void ub_loader_free(ub_loader *ld);

/* Directories to try, in order, for a relative asset path that does not
 * exist next to the layer naming it.  The string is copied. */
int ub_loader_add_search_path(ub_loader *ld, const char *dir);

/* Why ub_loader_open_arc found no layer. */
typedef enum ub_load_status {
    UB_LOAD_OK,
    UB_LOAD_MISSING,     /* no such file, or no such entry in a package */
    UB_LOAD_UNREADABLE,  /* not a layer usdbake reads (a Draco, Alembic or
                            MaterialX file...), a damaged package, or a
                            layer with errors */
    UB_LOAD_FAILED,      /* out of memory, or the file cannot be read */
} ub_load_status;

/* Resolve asset (as authored) from the layer `anchor` (NULL: from the
 * current directory).  Returns the resolved file path, interned (*st
 * UB_LOAD_OK), or NULL when no such file exists (UB_LOAD_MISSING) or when
 * out of memory (UB_LOAD_FAILED: whether it exists is not known).  Does
 * not read the file, except for a path into a usdz package
 * ("pkg.usdz[inner/a.usda]", nested packages too), which resolves when the
 * package holds that entry; relative paths written in a packaged layer
 * resolve inside its package first, as OpenUSD's do. */
const char *ub_loader_resolve(ub_loader *ld, const char *asset,
                              const ub_layer *anchor, ub_load_status *st);

/* The layer for asset, read and parsed on first use.  The format is told
 * by content, not by name: usda text, usdbake binary, or a usdz package
 * (its first entry is its root layer; the layer's path names it:
 * "x.usdz[root.usda]").  `named_at` is where
 * the asset path was written (for "no such layer" errors); its file may be
 * NULL for a command-line argument.  "-" reads standard input.  Returns
 * NULL after appending an error to the diagnostics. */
ub_layer *ub_loader_open(ub_loader *ld, const char *asset,
                         const ub_layer *anchor, ub_loc named_at);

/* ub_loader_open for an asset named by a composition arc (sublayer,
 * reference, payload, clip): OpenUSD reports a missing or unreadable asset
 * at the arc, drops the arc and composes on.  The errors are in the
 * diagnostics as always (an arc naming a layer that failed before gets
 * one of its own, at the arc); *st says why there is no layer, and when
 * the arc can be dropped (UB_LOAD_MISSING, UB_LOAD_UNREADABLE) the number
 * of errors this call appended is added to *n_recovered. */
ub_layer *ub_loader_open_arc(ub_loader *ld, const char *asset,
                             const ub_layer *anchor, ub_loc named_at,
                             ub_load_status *st, size_t *n_recovered);

/* True for the statuses of an arc that is dropped rather than fatal. */
bool ub_load_recoverable(ub_load_status st);

/* The identifier OpenUSD gives asset written in layer anchor when it
 * flattens (SdfComputeAssetPathRelativeToLayer with the default resolver,
 * kept as written where anchoring changes nothing): a relative path
 * anchored to the directory of the layer (absolute); a search path ("a.usda",
 * not "./a.usda") only when the file exists there; inside a package
 * ("p.usdz[a/b.usda]") relative paths stay inside it ("p.usdz[a/c.png]"),
 * search paths first next to the layer, then next to the package's root
 * layer; a package-relative asset ("t.usdz[x.png]") is anchored by its
 * package's path.  Absolute paths, empty paths and URIs ("scheme:...")
 * are returned as written.  Interned; NULL when out of memory (never the
 * path as written in its place: that would be a wrong answer). */
const char *ub_loader_anchor(ub_loader *ld, const char *asset,
                             const ub_layer *anchor);

/* For tests: the allocations made while placing asset paths (resolving,
 * anchoring) fail once n more have succeeded (n < 0: never, the
 * default), as if memory ran out there. */
void ub_loader_fail_allocs_after(ub_loader *ld, long n);

/* ub_loader_open (with the same diagnostics, by the same reading), for a
 * pass that needs the layer only for a while: unless it is
 * (or gets) opened by ub_loader_open too, ub_loader_release frees it (its
 * arena and source).  Opened again after that, it is read again. */
ub_layer *ub_loader_open_transient(ub_loader *ld, const char *asset,
                                   const ub_layer *anchor, ub_loc named_at);
/* Note that asset (resolved from anchor) will be read later: it takes its
 * place in the order of ub_loader_path_at now.  Returns 0, or -1 when out
 * of memory. */
int ub_loader_expect(ub_loader *ld, const char *asset, const ub_layer *anchor);
/* Give back a layer from ub_loader_open_transient (nothing happens to one
 * that ub_loader_open also returned).  Pointers into it are then invalid. */
void ub_loader_release(ub_loader *ld, ub_layer *layer);

/* Optional: called as layers are read, with the bytes read so far by this
 * loader (for a command's progress bar; the library never draws anything
 * itself): now and then while a big layer is parsed, and after each
 * layer. */
typedef void (*ub_loader_progress_fn)(void *ctx, const char *path,
                                      uint64_t bytes_read);
void ub_loader_set_progress(ub_loader *ld, ub_loader_progress_fn fn,
                            void *ctx);

/* Optional: text and crate layers opened from now on are read by a
 * streaming parse (ub_parse_opts.stream, ub_crate_read_stream): their
 * prims go to stream as they close and the layers kept are stubs
 * (layer->streamed).  For a command that writes each prim once and needs
 * no composition (cat).  NULL turns it off. */
void ub_loader_set_stream(ub_loader *ld, const ub_parse_stream *stream);

/* Metadata fields plugins declare (ub_schema_fields): text layers opened
 * from now on read them as known metadata of their type, and flattening
 * keeps them, as OpenUSD does with the plugins loaded.  Not owned. */
void ub_loader_set_fields(ub_loader *ld, const ub_meta_field *fields,
                          size_t n);
const ub_meta_field *ub_loader_fields(const ub_loader *ld, size_t *n);

/* Every layer read so far, in the order first read (for dependency
 * lists). */
size_t ub_loader_count(const ub_loader *ld);
/* NULL when that layer failed to load or was released. */
ub_layer *ub_loader_at(const ub_loader *ld, size_t i);
/* The path of the i-th layer read (its identifier: for a package entry
 * "p.usdz[a.usda]"), whether kept or released; NULL when it failed to
 * load or is not read yet. */
const char *ub_loader_path_at(const ub_loader *ld, size_t i);
/* The file that layer i was read from: its path, or for an entry of a
 * usdz package the package's (the same pointer for every entry of one
 * package), for dependency lists. */
const char *ub_loader_file_at(const ub_loader *ld, size_t i);

/* Lexical normalisation of a file path in place, as OpenUSD's TfNormPath:
 * no "." parts, ".." folded where it can be, no repeated slashes ("" and
 * "./" become ".").  The result is never longer.  Returns -1 when out of
 * memory.  ub_loader_resolve returns normalised paths, so one file has one
 * spelling (and one ub_layer). */
int ub_path_normalize(char *p);

/* A file's bytes: mapped read-only for a regular file (no copy, and the
 * kernel can drop clean pages under pressure), read into malloc'd memory
 * for a pipe or standard input.  A mapped file keeps its descriptor open
 * until it is parsed (ub_file_parsed), for the parse to read the bytes
 * through it. */
typedef struct ub_file {
    char *data;
    size_t len;
    bool mapped;
    int fd; /* with mapped: the file, until parsed; -1: none */
} ub_file;

/* Returns 0, or -1 with an error in diags naming the file and the reason.
 * "-" is standard input. */
int ub_file_load(const char *path, ub_file *f, ub_diags *diags,
                 ub_loc named_at);
/* The options that parse f's bytes as they are held: mapped, and read
 * through the descriptor while it is open (f must outlive the parse). */
void ub_file_parse_opts(const ub_file *f, ub_parse_opts *po);
/* f has been parsed: its descriptor is closed (a stage keeps hundreds of
 * layers, and as many descriptors would run into the process's limit);
 * its bytes stay. */
void ub_file_parsed(ub_file *f);
void ub_file_release(ub_file *f);

/* The directory for temporary files: $TMPDIR, else /tmp. */
const char *ub_tmpdir(void);
/* A temporary file in ub_tmpdir() that never has a name (O_TMPFILE), so
 * that nothing is left behind whatever ends the run; -1 (errno set) where
 * the system or the file system has no such files. */
int ub_tmpfile_open(void);
/* write(2) until all of data is written, pread(2) until all of len is
 * read from off, pwrite(2) until all of data is written at off: 0, or -1
 * with errno (EIO for a write that wrote nothing or a file that ends
 * first). */
int ub_write_all(int fd, const void *data, size_t len);
int ub_pread_all(int fd, void *buf, size_t len, uint64_t off);
int ub_pwrite_all(int fd, const void *data, size_t len, uint64_t off);

/* Read a whole file ("-" = stdin) into malloc'd memory.  Returns 0, or -1
 * with an error in diags naming the file and the reason. */
int ub_read_file(const char *path, char **data, size_t *len, ub_diags *diags,
                 ub_loc named_at);

/* Transient layers read on other threads (a pass that reads many):
 * ub_loader_task_begin, on the loader's thread, either finds nothing to
 * read (returns 0: task->layer is what ub_loader_open_transient gives,
 * which may be NULL) or claims the layer for a reader (returns 1; -1 when
 * out of memory).  ub_loader_task_run reads and parses it on any thread
 * (the string table made concurrent meanwhile; it touches no loader), and
 * ub_loader_task_end, back on the loader's thread, registers it as
 * ub_loader_open_transient would have, with its diagnostics (in the order
 * the tasks end), and returns it. */
typedef struct ub_loader_task {
    ub_layer *layer;
    /* after ub_loader_task_end: no layer because memory ran out while
     * reading it (a pass reading many then stops, where a missing or
     * broken layer only leaves a gap) */
    bool out_of_memory;
    /* private */
    const char *resolved;
    const ub_layer *anchor;
    ub_loc named_at;
    size_t index;
    const ub_meta_field *fields;
    size_t n_fields;
    bool quiet, claimed;
    ub_file file;
    ub_diags *diags;
    bool in_pkg, have_bytes; /* an entry of a package: its bytes */
    const char *data;
    size_t len;
    ub_load_status st;
} ub_loader_task;

int ub_loader_task_begin(ub_loader *ld, const char *asset,
                         const ub_layer *anchor, ub_loc named_at,
                         ub_loader_task *task);
void ub_loader_task_run(ub_strtab *t, ub_loader_task *task);
ub_layer *ub_loader_task_end(ub_loader *ld, ub_loader_task *task);

#endif
