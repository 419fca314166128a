/*
 * ub_progress — a progress bar on stderr for long commands.
 *
 * It draws only when stderr is a terminal and the work is long (more than
 * 50 MB in total, or still running after half a second), and redraws at
 * most ten times a second, so callers may report progress as often as they
 * like.  Usage:
 *
 *     ub_progress p;
 *     ub_progress_start(&p, "parsing", total_bytes);
 *     ... ub_progress_update(&p, bytes_done); ...
 *     ub_progress_end(&p);
 */
#ifndef UB_PROGRESS_H
#define UB_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct ub_progress {
    const char *label;
    uint64_t total, done, next_check;
    double start, last_draw;
    bool tty, drawn;
} ub_progress;

/* total: units of work (bytes, for the MB/s figure), 0 when unknown. */
void ub_progress_start(ub_progress *p, const char *label, uint64_t total);
void ub_progress_update(ub_progress *p, uint64_t done);
/* Erase the bar (if one was drawn). */
void ub_progress_end(ub_progress *p);

/* A ub_loader_progress_fn: pass a ub_progress as ctx to
 * ub_loader_set_progress and the bar follows the bytes read. */
void ub_progress_loader_hook(void *ctx, const char *path, uint64_t bytes);

#endif
