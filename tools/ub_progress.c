#include "ub_progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define UB_PROGRESS_BIG (50u * 1000 * 1000) /* bytes: draw at once */
#define UB_PROGRESS_DELAY 0.5               /* seconds before drawing */
#define UB_PROGRESS_PERIOD 0.1              /* seconds between redraws */
#define UB_PROGRESS_WIDTH 30

static double ub_progress_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void ub_progress_start(ub_progress *p, const char *label, uint64_t total)
{
    *p = (ub_progress){.label = label, .total = total};
    p->tty = isatty(STDERR_FILENO) == 1;
    p->start = p->last_draw = p->tty ? ub_progress_now() : 0.0;
}

static void ub_progress_draw(ub_progress *p, double now)
{
    double elapsed = now - p->start;
    double mb = (double)p->done / 1e6;
    double rate = elapsed > 0 ? mb / elapsed : 0;
    if (p->total) {
        double f = (double)p->done / (double)p->total;
        if (f > 1)
            f = 1;
        int fill = (int)(f * UB_PROGRESS_WIDTH);
        char bar[UB_PROGRESS_WIDTH + 1];
        for (int i = 0; i < UB_PROGRESS_WIDTH; i++)
            bar[i] = i < fill ? '#' : ' ';
        bar[UB_PROGRESS_WIDTH] = '\0';
        fprintf(stderr, "\r%s [%s] %3d%%  %.0f MB/s ", p->label, bar,
                (int)(f * 100), rate);
    } else {
        fprintf(stderr, "\r%s %.1f MB  %.0f MB/s ", p->label, mb, rate);
    }
    fflush(stderr);
    p->drawn = true;
    p->last_draw = now;
}

void ub_progress_update(ub_progress *p, uint64_t done)
{
    p->done = done;
    /* Reading the clock for every call would cost more than the work of a
     * small step: look at it only after 1/1000 of the total (or 1 MB). */
    if (!p->tty || done < p->next_check)
        return;
    uint64_t step = p->total ? p->total / 1000 : 1000000;
    p->next_check = done + (step ? step : 1);
    double now = ub_progress_now();
    if (!p->drawn && p->total < UB_PROGRESS_BIG &&
        now - p->start < UB_PROGRESS_DELAY)
        return;
    if (p->drawn && now - p->last_draw < UB_PROGRESS_PERIOD)
        return;
    ub_progress_draw(p, now);
}

void ub_progress_end(ub_progress *p)
{
    if (p->drawn) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    p->drawn = false;
}

void ub_progress_loader_hook(void *ctx, const char *path, uint64_t bytes)
{
    (void)path;
    ub_progress_update(ctx, bytes);
}
