/*
 * bench/ub_bench — the measuring half of `make bench` (bench/run drives it).
 *
 *   ub_bench parse FILE [RUNS]  parse FILE in-process, then write it as
 *                               canonical usda into memory; best of RUNS
 *                               (default 3).  The file is read before the
 *                               clock starts, so this is the parser and the
 *                               writer alone.
 *   ub_bench exec CMD [ARG...]  run CMD (stdout to /dev/null) and report
 *                               its wall time and peak RSS.
 *
 * Output is `key=value` words on one line, for the script to read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "ub_loader.h"
#include "ub_parse.h"
#include "ub_usda.h"

static double ub_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int ub_bench_parse(const char *path, int runs)
{
    ub_diags *diags = ub_diags_new();
    char *text = NULL;
    size_t len = 0;
    if (!diags || ub_read_file(path, &text, &len, diags,
                               (ub_loc){NULL, 0, 0}) != 0) {
        fprintf(stderr, "ub_bench: cannot read %s\n", path);
        ub_diags_free(diags);
        return 1;
    }
    double best_parse = 1e30, best_write = 1e30;
    size_t out_len = 0;
    int status = 0;
    for (int r = 0; r < runs && status == 0; r++) {
        ub_strtab *t = ub_strtab_new();
        double t0 = ub_now();
        ub_layer *layer = ub_parse_usda(t, path, text, len, diags);
        double t1 = ub_now();
        ub_buf out;
        ub_buf_init(&out);
        int w = layer ? ub_usda_write(layer, &out) : -1;
        double t2 = ub_now();
        if (!layer || w != 0) {
            fprintf(stderr, "ub_bench: %s: %s failed\n", path,
                    layer ? "writing" : "parsing");
            for (size_t i = 0; i < ub_diags_count(diags) && i < 3; i++)
                ub_diag_print(stderr, ub_diags_at(diags, i));
            status = 1;
        }
        out_len = out.len;
        if (t1 - t0 < best_parse)
            best_parse = t1 - t0;
        if (t2 - t1 < best_write)
            best_write = t2 - t1;
        ub_buf_free(&out);
        ub_layer_free(layer);
        ub_strtab_free(t);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    if (status == 0)
        printf("bytes=%zu parse_s=%.4f write_s=%.4f out_bytes=%zu "
               "peak_rss_kb=%ld\n",
               len, best_parse, best_write, out_len, ru.ru_maxrss);
    free(text);
    ub_diags_free(diags);
    return status;
}

static int ub_bench_exec(char **argv)
{
    double t0 = ub_now();
    pid_t pid = fork();
    if (pid < 0) {
        perror("ub_bench: fork");
        return 1;
    }
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0)
            dup2(fd, STDOUT_FILENO);
        execvp(argv[0], argv);
        perror("ub_bench: exec");
        _exit(127);
    }
    int st;
    struct rusage ru;
    if (wait4(pid, &st, 0, &ru) < 0) {
        perror("ub_bench: wait");
        return 1;
    }
    double t1 = ub_now();
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    printf("wall_s=%.4f peak_rss_kb=%ld exit=%d\n", t1 - t0, ru.ru_maxrss,
           code);
    return code;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "parse") == 0 && argc <= 4) {
        int runs = argc == 4 ? atoi(argv[3]) : 3;
        return ub_bench_parse(argv[2], runs > 0 ? runs : 1);
    }
    if (argc >= 3 && strcmp(argv[1], "exec") == 0)
        return ub_bench_exec(argv + 2);
    fprintf(stderr, "usage: ub_bench parse FILE [RUNS]\n"
                    "       ub_bench exec CMD [ARG...]\n");
    return 2;
}
