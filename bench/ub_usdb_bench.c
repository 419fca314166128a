/*
 * bench/ub_usdb_bench — the .usdb runtime reader under load:
 *
 *   ub_usdb_bench read FILE.usdb      open, then read every value through
 *                                     the runtime API (fields, defaults,
 *                                     every time sample); prints seconds
 *   ub_usdb_bench sections FILE.usdb  the sections: name, offset, sizes
 *   ub_usdb_bench one FILE.usdb PRIM PROP
 *                                     open and read one attribute's value at
 *                                     time 1; prints the bytes decompressed
 *                                     against the file's total
 *
 * Links only libusdbake-runtime, as a consumer would.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ub_usdb.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int read_fields(ub_usdb *f, uint32_t first, uint32_t n, ub_arena *a,
                       size_t *values)
{
    ub_value v;
    for (uint32_t i = 0; i < n; i++) {
        if (ub_usdb_field_value(f, first + i, a, &v) != 0)
            return -1;
        (*values)++;
    }
    return 0;
}

static int read_all(ub_usdb *f, size_t *values)
{
    uint32_t first, n;
    ub_value v;
    ub_usdb_layer_fields(f, &first, &n);
    ub_arena *a = ub_arena_new();
    int rc = read_fields(f, first, n, a, values);
    for (uint32_t p = 0; rc == 0 && p < ub_usdb_prim_count(f); p++) {
        ub_usdb_prim_fields(f, p, &first, &n);
        rc = read_fields(f, first, n, a, values);
        for (uint32_t i = 0; rc == 0 && i < ub_usdb_prim_prop_count(f, p);
             i++) {
            uint32_t q = ub_usdb_prim_prop(f, p, i);
            ub_usdb_prop_fields(f, q, &first, &n);
            const double *times;
            uint32_t ns;
            if (read_fields(f, first, n, a, values) != 0 ||
                ub_usdb_prop_default(f, q, a, &v) != 0 ||
                ub_usdb_prop_targets(f, q, a, &v) != 0 ||
                ub_usdb_prop_connections(f, q, a, &v) != 0 ||
                ub_usdb_sample_times(f, q, a, &times, &ns) != 0) {
                rc = -1;
                break;
            }
            *values += 1 + ns;
            for (uint32_t k = 0; rc == 0 && k < ns; k++)
                rc = ub_usdb_sample(f, q, k, a, &v);
        }
        /* values are the caller's to keep; a reader streaming through a
         * file frees them per prim */
        ub_arena_free(a);
        a = ub_arena_new();
    }
    ub_arena_free(a);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "read") != 0 &&
                     strcmp(argv[1], "sections") != 0 &&
                     !(strcmp(argv[1], "one") == 0 && argc == 5))) {
        fprintf(stderr, "usage: ub_usdb_bench read FILE.usdb\n"
                        "       ub_usdb_bench one FILE.usdb PRIM PROP\n"
                        "       ub_usdb_bench sections FILE.usdb\n");
        return 2;
    }
    ub_diags *d = ub_diags_new();
    double t0 = now();
    ub_usdb *f = ub_usdb_open(argv[2], NULL, d);
    int rc = f ? 0 : 1;
    size_t values = 0;
    if (f && strcmp(argv[1], "sections") == 0) {
        /* name<TAB>offset<TAB>stored<TAB>raw, for tests and curiosity */
        for (uint32_t i = 0; i < ub_usdb_section_count(f); i++) {
            char name[48];
            uint64_t off, st, raw;
            ub_usdb_section(f, i, name, &off, &st, &raw);
            printf("%s\t%llu\t%llu\t%llu\n", name, (unsigned long long)off,
                   (unsigned long long)st, (unsigned long long)raw);
        }
    } else if (f && strcmp(argv[1], "read") == 0) {
        rc = read_all(f, &values) != 0;
        if (rc == 0)
            printf("read_s=%.4f values=%zu decompressed=%llu\n", now() - t0,
                   values, (unsigned long long)ub_usdb_bytes_decompressed(f));
    } else if (f) {
        uint32_t p = ub_usdb_find_prim(f, argv[3]);
        uint32_t q = ub_usdb_find_prop(f, p, argv[4]);
        ub_arena *a = ub_arena_new();
        ub_value v;
        rc = q == UB_USDB_NONE || ub_usdb_value_at(f, q, 1.0, a, &v) != 0;
        if (rc == 0)
            printf("one_s=%.4f decompressed=%llu of=%llu (%.2f%%)\n",
                   now() - t0,
                   (unsigned long long)ub_usdb_bytes_decompressed(f),
                   (unsigned long long)ub_usdb_bytes_raw_total(f),
                   100.0 * (double)ub_usdb_bytes_decompressed(f) /
                       (double)ub_usdb_bytes_raw_total(f));
        else if (q == UB_USDB_NONE)
            fprintf(stderr, "no %s.%s\n", argv[3], argv[4]);
        ub_arena_free(a);
    }
    for (size_t i = 0; i < ub_diags_count(d); i++)
        ub_diag_print(stderr, ub_diags_at(d, i));
    ub_usdb_close(f);
    ub_diags_free(d);
    return rc;
}
