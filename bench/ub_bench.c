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
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <malloc.h>

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

/* --- mem: where a layer's model memory goes ------------------------------ */

typedef struct ub_mem {
    size_t prims, attrs, rels, fields, dict_entries, dicts, listops,
        listop_parts, samples, value_data, sample_arrays, untyped;
    size_t props_with_meta, attrs_with_default, props_with_conn,
        props_with_samples, rels_with_targets, prims_with_vsets;
    size_t list_cap_waste, exts, rel_exts, meta_exts;
    size_t listop_entries, ptr_arrays; /* allocated: caps */
} ub_mem;

static void ub_mem_value(ub_mem *m, const ub_value *v);

static void ub_mem_dict(ub_mem *m, const ub_dict *d)
{
    m->dicts++;
    m->dict_entries += d->n;
    m->list_cap_waste += (size_t)(d->cap - d->n) * sizeof *d->e;
    for (uint32_t i = 0; i < d->n; i++)
        ub_mem_value(m, &d->e[i].value);
}

static void ub_mem_value(ub_mem *m, const ub_value *v)
{
    switch (v->kind) {
    case UB_V_DATA:
        if (!ub_value_is_inline(v)) /* else inside the record */
            m->value_data += ub_value_bytes(v);
        break;
    case UB_V_DICT:
        ub_mem_dict(m, v->u.dict);
        break;
    case UB_V_LISTOP:
        m->listops++;
        m->listop_entries += v->u.listop->cap;
        for (int i = 0; i < UB_LO_NPARTS; i++)
            if (v->u.listop->has[i]) {
                m->listop_parts++;
                ub_mem_value(m, ub_listop_get(v->u.listop, i));
            }
        break;
    case UB_V_UNTYPED:
        m->untyped++;
        break;
    default:
        break;
    }
}

static void ub_mem_fields(ub_mem *m, const ub_fields *f)
{
    m->fields += f->n;
    m->list_cap_waste += (size_t)(f->cap - f->n) * sizeof *f->v;
    for (uint32_t i = 0; i < f->n; i++)
        ub_mem_value(m, &f->v[i].value);
}

static void ub_mem_prim(ub_mem *m, const ub_prim *p)
{
    m->prims++;
    m->ptr_arrays += ((size_t)p->props.n + p->children.n) * sizeof(void *);
    ub_mem_fields(m, &p->meta);
    m->list_cap_waste += (size_t)(p->props.cap - p->props.n) * sizeof(void *);
    m->list_cap_waste +=
        (size_t)(p->children.cap - p->children.n) * sizeof(void *);
    if (ub_prim_n_variant_sets(p))
        m->prims_with_vsets++;
    for (uint32_t i = 0; i < p->props.n; i++) {
        const ub_prop *pr = p->props.v[i];
        if (pr->kind == UB_ATTR)
            m->attrs++;
        else
            m->rels++;
        if (ub_prop_meta(pr)->n)
            m->props_with_meta++;
        ub_mem_fields(m, ub_prop_meta(pr));
        if (pr->default_value.kind != UB_V_EMPTY)
            m->attrs_with_default++;
        ub_mem_value(m, &pr->default_value);
        if (ub_prop_connections(pr)->kind != UB_V_EMPTY)
            m->props_with_conn++;
        ub_mem_value(m, ub_prop_connections(pr));
        if (ub_prop_targets(pr)->kind != UB_V_EMPTY)
            m->rels_with_targets++;
        ub_mem_value(m, ub_prop_targets(pr));
        if (ub_prop_samples(pr)->authored)
            m->props_with_samples++;
        if (pr->ext_part == UB_PEXT_META)
            m->meta_exts++;
        else if (pr->ext_part == UB_PEXT_SHORT)
            m->rel_exts++;
        else if (pr->ext_part == UB_PEXT_WHOLE)
            m->exts++;
        m->samples += ub_prop_samples(pr)->n;
        for (uint32_t k = 0; k < ub_prop_samples(pr)->n; k++)
            ub_mem_value(m, &ub_prop_samples(pr)->v[k].value);
    }
    ub_mem_value(m, ub_prim_prim_order(p));
    ub_mem_value(m, ub_prim_property_order(p));
    for (uint32_t i = 0; i < p->children.n; i++)
        ub_mem_prim(m, p->children.v[i]);
    for (uint32_t s = 0; s < ub_prim_n_variant_sets(p); s++)
        for (uint32_t i = 0; i < ub_prim_variant_sets(p)[s].variants.n; i++)
            ub_mem_prim(m, ub_prim_variant_sets(p)[s].variants.v[i]);
}

static long ub_rss_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t kl = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, key, kl) == 0)
            v = atol(line + kl + 1);
    if (f)
        fclose(f);
    return v;
}

static int ub_bench_mem(const char *path)
{
    ub_diags *diags = ub_diags_new();
    ub_file file;
    if (!diags || ub_file_load(path, &file, diags, (ub_loc){NULL, 0, 0})) {
        fprintf(stderr, "ub_bench: cannot read %s\n", path);
        ub_diags_free(diags);
        return 1;
    }
    ub_strtab *t = ub_strtab_new();
    ub_parse_opts o = {.split = -1};
    ub_file_parse_opts(&file, &o);
    ub_layer *layer =
        ub_parse_usda_opts(t, path, file.data, file.len, &o, diags);
    ub_file_parsed(&file);
    if (!layer) {
        fprintf(stderr, "ub_bench: %s: parsing failed\n", path);
        return 1;
    }
    ub_mem m = {0};
    ub_mem_fields(&m, &layer->meta);
    ub_mem_prim(&m, layer->root);
    struct mallinfo2 mi = mallinfo2();
    printf("input          %zu bytes\n", file.len);
    printf("VmRSS %ld kB  VmHWM %ld kB  RssFile %ld kB  RssAnon %ld kB\n",
           ub_rss_kb("VmRSS:"), ub_rss_kb("VmHWM:"), ub_rss_kb("RssFile:"),
           ub_rss_kb("RssAnon:"));
    printf("malloc in use  %zu  (arena chunks, index, strtab slots)\n",
           mi.uordblks + mi.hblkhd);
    size_t used, reserved;
    ub_arena_footprint(layer->arena, &used, &reserved);
    printf("layer arena    %zu handed out; %zu with padding; %zu in chunks\n",
           ub_arena_bytes(layer->arena), used, reserved);
    printf("strtab         %zu strings, %zu bytes\n", ub_strtab_count(t),
           ub_strtab_bytes(t));
#define ROW(name, n, size)                                                    \
    printf("%-14s %10zu x %4zu = %10zu\n", name, (size_t)(n), (size_t)(size), \
           (size_t)(n) * (size_t)(size))
    ROW("ub_prim", m.prims, sizeof(ub_prim));
    ROW("ub_prop attr", m.attrs, sizeof(ub_prop));
    ROW("ub_prop rel", m.rels, sizeof(ub_prop));
    ROW("ub_prop_ext", m.exts, sizeof(ub_prop_ext));
    ROW("  short part", m.rel_exts, offsetof(ub_prop_ext, samples));
    ROW("  meta part", m.meta_exts, offsetof(ub_prop_ext, type_name));
    ROW("ub_field", m.fields, sizeof(ub_field));
    ROW("ub_dict", m.dicts, sizeof(ub_dict));
    ROW("ub_dict_entry", m.dict_entries, sizeof(ub_dict_entry));
    ROW("ub_listop", m.listops, sizeof(ub_listop));
    ROW("ub_sample", m.samples, sizeof(ub_sample));
    ROW("listop entry", m.listop_entries, sizeof(ub_listop_entry));
    ROW("value data", 1, m.value_data);
    ROW("ptr arrays", 1, m.ptr_arrays);
    ROW("list slack", 1, m.list_cap_waste);
    size_t rows =
        m.prims * sizeof(ub_prim) + (m.attrs + m.rels) * sizeof(ub_prop) +
        m.exts * sizeof(ub_prop_ext) +
        m.rel_exts * offsetof(ub_prop_ext, samples) +
        m.meta_exts * offsetof(ub_prop_ext, type_name) +
        m.fields * sizeof(ub_field) + m.dicts * sizeof(ub_dict) +
        m.dict_entries * sizeof(ub_dict_entry) +
        m.listops * sizeof(ub_listop) +
        m.listop_entries * sizeof(ub_listop_entry) +
        m.samples * sizeof(ub_sample) + m.value_data + m.ptr_arrays +
        m.list_cap_waste;
    ROW("other", 1, ub_arena_bytes(layer->arena) - rows);
    printf("listop parts authored %zu; props with meta %zu, default %zu, "
           "connections %zu, samples %zu; rels with targets %zu; "
           "untyped %zu\n",
           m.listop_parts, m.props_with_meta, m.attrs_with_default,
           m.props_with_conn, m.props_with_samples, m.rels_with_targets,
           m.untyped);
    ub_layer_free(layer);
    ub_strtab_free(t);
    ub_file_release(&file);
    ub_diags_free(diags);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "parse") == 0 && argc <= 4) {
        int runs = argc == 4 ? atoi(argv[3]) : 3;
        return ub_bench_parse(argv[2], runs > 0 ? runs : 1);
    }
    if (argc >= 3 && strcmp(argv[1], "exec") == 0)
        return ub_bench_exec(argv + 2);
    if (argc == 3 && strcmp(argv[1], "mem") == 0)
        return ub_bench_mem(argv[2]);
    fprintf(stderr, "usage: ub_bench parse FILE [RUNS]\n"
                    "       ub_bench exec CMD [ARG...]\n"
                    "       ub_bench mem FILE\n");
    return 2;
}
