/*
 * ub_schema — the schema registry (see ub_schema.h for the rules).
 */
#include "ub_schema.h"

#include <glob.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ub_arena.h"
#include "ub_idtab.h"
#include "ub_json.h"
#include "ub_layer.h"
#include "ub_loader.h"
#include "ub_parse.h"

/* One schema of the generated table: offsets into its shared arrays. */
typedef struct ub_schema_fact {
    const char *name, *tf_name, *lib;
    ub_schema_kind kind;
    const char *base;
    uint32_t prop0, n_props, api0, n_apis, auto0, n_auto, ovr0, n_ovr;
} ub_schema_fact;

#include "ub_schema_tables.h"

#define UB_SCHEMA_INSTANCE "__INSTANCE_NAME__"
/* Bounds a built-in expansion: OpenUSD cuts inclusion cycles too. */
#define UB_SCHEMA_MAX_DEPTH 16

struct ub_schema_reg {
    ub_schema_def *defs;
    size_t n, cap;
    ub_idtab by_name; /* name -> index in defs */
    ub_strtab *t;
    ub_arena *arena; /* what plugins add */
    ub_meta_field *fields;
    size_t n_fields;
    char **visited;  /* plugInfo.json files read (each once) */
    size_t n_visited;
};

const char *ub_schema_release(void)
{
    return UB_SCHEMA_TABLES_RELEASE;
}

/* A name by its bytes: an API schema's "Name" in "Name:instance". */
typedef struct ub_schema_name {
    const char *s;
    size_t n;
} ub_schema_name;

static bool ub_schema_name_eq(const void *ctx, uint32_t id, const void *key)
{
    const char *d = ((const ub_schema_reg *)ctx)->defs[id].name;
    const ub_schema_name *k = key;
    return strncmp(d, k->s, k->n) == 0 && d[k->n] == '\0';
}

static const ub_schema_def *ub_schema_findn(const ub_schema_reg *r,
                                            const char *name, size_t n)
{
    uint32_t id = ub_idtab_get(&r->by_name, ub_hash_bytes(name, n),
                               ub_schema_name_eq, r,
                               &(ub_schema_name){name, n});
    return id == UINT32_MAX ? NULL : &r->defs[id];
}

const ub_schema_def *ub_schema_find(const ub_schema_reg *r, const char *name)
{
    return name ? ub_schema_findn(r, name, strlen(name)) : NULL;
}

size_t ub_schema_count(const ub_schema_reg *r)
{
    return r->n;
}

const ub_schema_def *ub_schema_at(const ub_schema_reg *r, size_t i)
{
    return i < r->n ? &r->defs[i] : NULL;
}

/* Add a schema (its strings must outlive the registry).  Returns 1 when
 * added, 0 when one of that name is there already (the first stays, as in
 * OpenUSD), -1 when out of memory. */
static int ub_schema_reg_add(ub_schema_reg *r, const ub_schema_def *d)
{
    ub_schema_name k = {d->name, strlen(d->name)};
    uint64_t h = ub_hash_bytes(k.s, k.n);
    ub_idslot *s = ub_idtab_find(&r->by_name, h, ub_schema_name_eq, r, &k);
    if (!s)
        return -1;
    if (ub_idslot_used(s))
        return 0;
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 128;
        ub_schema_def *v = realloc(r->defs, cap * sizeof *v);
        if (!v)
            return -1;
        r->defs = v;
        r->cap = cap;
    }
    ub_idtab_put(&r->by_name, s, h, (uint32_t)r->n);
    r->defs[r->n++] = *d;
    return 1;
}

static bool ub_schema_is_a(const ub_schema_reg *r, const ub_schema_def *d,
                           const char *type);

static int ub_schema_cmp_desc(const void *a, const void *b)
{
    return strcmp(*(const char *const *)b, *(const char *const *)a);
}

/* Each schema's auto-applied API schemas, strongest first: reverse
 * dictionary order, as UsdSchemaRegistry sorts them. */
static int ub_schema_reg_index(ub_schema_reg *r)
{
    for (size_t i = 0; i < r->n; i++) {
        ub_schema_def *d = &r->defs[i];
        const char **autos = NULL;
        uint32_t na = 0;
        for (size_t j = 0; j < r->n; j++) {
            const ub_schema_def *a = &r->defs[j];
            for (uint32_t k = 0; k < a->n_auto_to; k++) {
                if (!ub_schema_is_a(r, d, a->auto_to[k]))
                    continue;
                autos = ub_arena_grow(r->arena, autos, na, na + 1,
                                      sizeof *autos);
                if (!autos)
                    return -1;
                autos[na++] = a->name;
                break;
            }
        }
        if (na > 1)
            qsort(autos, na, sizeof *autos, ub_schema_cmp_desc);
        d->auto_applied = autos;
        d->n_auto_applied = na;
    }
    return 0;
}

ub_schema_reg *ub_schema_reg_new(ub_strtab *t)
{
    ub_schema_reg *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->t = t;
    r->arena = ub_arena_new();
    if (!r->arena) {
        free(r);
        return NULL;
    }
    size_t n = sizeof ub_schema_facts / sizeof ub_schema_facts[0];
    for (size_t i = 0; i < n; i++) {
        const ub_schema_fact *f = &ub_schema_facts[i];
        ub_schema_def d = {
            .name = f->name, .tf_name = f->tf_name, .lib = f->lib, .kind = f->kind, .base = f->base,
            .props = ub_schema_prop_facts + f->prop0, .n_props = f->n_props,
            .apis = ub_schema_name_facts + f->api0, .n_apis = f->n_apis,
            .auto_to = ub_schema_name_facts + f->auto0,
            .n_auto_to = f->n_auto,
            .overrides = ub_schema_name_facts + f->ovr0,
            .n_overrides = f->n_ovr};
        if (ub_schema_reg_add(r, &d) < 0) {
            ub_schema_reg_free(r);
            return NULL;
        }
    }
    if (ub_schema_reg_index(r) != 0) {
        ub_schema_reg_free(r);
        return NULL;
    }
    return r;
}

void ub_schema_reg_free(ub_schema_reg *r)
{
    if (!r)
        return;
    free(r->defs);
    ub_idtab_free(&r->by_name);
    for (size_t i = 0; i < r->n_visited; i++)
        free(r->visited[i]);
    free(r->visited);
    ub_arena_free(r->arena);
    free(r);
}

/* --- prim definitions ------------------------------------------------------ */

/* Whether property template `tmpl` with instance name `inst` (NULL: none)
 * names `name`. */
static bool ub_schema_tmpl_match(const char *tmpl, const char *inst,
                                 const char *name)
{
    const size_t kn = sizeof UB_SCHEMA_INSTANCE - 1;
    while (*tmpl) {
        if (inst && strncmp(tmpl, UB_SCHEMA_INSTANCE, kn) == 0) {
            size_t n = strlen(inst);
            if (strncmp(name, inst, n) != 0)
                return false;
            name += n;
            tmpl += kn;
        } else if (*tmpl++ != *name++) {
            return false;
        }
    }
    return *name == '\0';
}

/* Whether schema d is `type` or derives from it. */
static bool ub_schema_is_a(const ub_schema_reg *r, const ub_schema_def *d,
                           const char *type)
{
    for (int depth = 0; d && depth < UB_SCHEMA_MAX_DEPTH; depth++) {
        if (strcmp(d->name, type) == 0)
            return true;
        d = ub_schema_find(r, d->base);
    }
    return false;
}

typedef struct ub_schema_query {
    const ub_schema_reg *r;
    const char *name;
    ub_schema_prop *out;
} ub_schema_query;

static bool ub_schema_find_in(const ub_schema_query *q, const ub_schema_def *d,
                              const char *inst, int depth);

/* Property q->name in API schema `api` ("Name" or "Name:instance", where the
 * instance may hold the template of an enclosing multiple-apply schema,
 * expanded with outer_inst). */
static bool ub_schema_find_api(const ub_schema_query *q, const char *api,
                               const char *outer_inst, int depth)
{
    const char *colon = strchr(api, ':');
    size_t tn = colon ? (size_t)(colon - api) : strlen(api);
    const ub_schema_def *d = ub_schema_findn(q->r, api, tn);
    if (!d || depth > UB_SCHEMA_MAX_DEPTH)
        return false;
    if (d->kind == UB_SCHEMA_SINGLE_API)
        return !colon && ub_schema_find_in(q, d, NULL, depth);
    if (d->kind != UB_SCHEMA_MULTI_API || !colon || !colon[1])
        return false;
    /* the instance name, the enclosing instance put in its template */
    char inst[512];
    size_t n = 0;
    const size_t kn = sizeof UB_SCHEMA_INSTANCE - 1;
    for (const char *s = colon + 1; *s;) {
        const char *piece = s;
        size_t len = 1;
        if (outer_inst && strncmp(s, UB_SCHEMA_INSTANCE, kn) == 0) {
            piece = outer_inst;
            len = strlen(outer_inst);
            s += kn;
        } else {
            s++;
        }
        if (n + len >= sizeof inst)
            return false;
        memcpy(inst + n, piece, len);
        n += len;
    }
    inst[n] = '\0';
    return ub_schema_find_in(q, d, inst, depth);
}

/* Property q->name in schema d's expanded definition (applied with
 * instance name inst): its own properties, then its built-in API schemas,
 * then the API schemas auto-applied to it; its overrides last. */
static bool ub_schema_find_in(const ub_schema_query *q, const ub_schema_def *d,
                              const char *inst, int depth)
{
    const ub_schema_prop_fact *over = NULL;
    for (uint32_t i = 0; i < d->n_props; i++) {
        const ub_schema_prop_fact *p = &d->props[i];
        if (!ub_schema_tmpl_match(p->name, inst, q->name))
            continue;
        bool is_override = false;
        for (uint32_t k = 0; k < d->n_overrides && !is_override; k++)
            is_override = strcmp(d->overrides[k], p->name) == 0;
        if (is_override) {
            over = p;
            continue;
        }
        *q->out = (ub_schema_prop){.type_name = p->type_name,
                                   .uniform = p->uniform != 0,
                                   .fallback = p->fallback,
                                   .schema = d->name};
        return true;
    }
    bool found = false;
    for (uint32_t i = 0; i < d->n_apis && !found; i++)
        found = ub_schema_find_api(q, d->apis[i], inst, depth + 1);
    for (uint32_t i = 0; i < d->n_auto_applied && !found; i++)
        found = ub_schema_find_api(q, d->auto_applied[i], inst, depth + 1);
    if (found && over) {
        /* an override restates a built-in property of the same type */
        const char *a = q->out->type_name, *b = over->type_name;
        if ((!a && !b) || (a && b && strcmp(a, b) == 0)) {
            q->out->uniform = over->uniform != 0;
            if (over->fallback)
                q->out->fallback = over->fallback;
        }
    }
    return found;
}

bool ub_schema_lookup(const ub_schema_reg *r, const char *prim_type,
                      const char *const *apis, size_t n_apis,
                      const char *name, ub_schema_prop *out)
{
    ub_schema_query q = {.r = r, .name = name, .out = out};
    if (!r || !name)
        return false;
    const ub_schema_def *d = prim_type && *prim_type
                                 ? ub_schema_find(r, prim_type)
                                 : NULL;
    if (d && d->kind == UB_SCHEMA_CONCRETE && ub_schema_find_in(&q, d, NULL, 0))
        return true;
    for (size_t i = 0; i < n_apis; i++)
        if (apis[i] && ub_schema_find_api(&q, apis[i], NULL, 0))
            return true;
    return false;
}

/* --- a studio's schemas and metadata: plugInfo.json files ------------------ */

const ub_meta_field *ub_schema_fields(const ub_schema_reg *r, size_t *n)
{
    *n = r->n_fields;
    return r->fields;
}

const ub_meta_field *ub_schema_field_find(const ub_schema_reg *r,
                                          const char *name)
{
    for (size_t i = 0; name && i < r->n_fields; i++)
        if (r->fields[i].name == name || strcmp(r->fields[i].name, name) == 0)
            return &r->fields[i];
    return NULL;
}

typedef struct ub_plug {
    ub_schema_reg *r;
    ub_diags *diags;
    bool oom;
    int depth;       /* Includes followed */
} ub_plug;

static void ub_plug_warn(ub_plug *p, ub_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void ub_plug_warn(ub_plug *p, ub_loc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (!ub_diag_addv(p->diags, UB_WARNING, loc, "plugin-info", NULL, 0, fmt,
                      ap))
        p->oom = true;
    va_end(ap);
}

static const char *ub_plug_intern(ub_plug *p, const char *s)
{
    const char *i = s ? ub_intern_cstr(p->r->t, s) : NULL;
    if (s && !i)
        p->oom = true;
    return i;
}

/* dir + "/" + rel, or rel when it is absolute; malloc'ed. */
static char *ub_plug_join(const char *dir, const char *rel)
{
    size_t dn = strlen(dir), rn = strlen(rel);
    char *s = malloc(dn + rn + 2);
    if (!s)
        return NULL;
    if (rel[0] == '/' || dn == 0) {
        memcpy(s, rel, rn + 1);
    } else {
        memcpy(s, dir, dn);
        size_t k = dn;
        if (dir[dn - 1] != '/')
            s[k++] = '/';
        memcpy(s + k, rel, rn + 1);
    }
    return s;
}

/* The directory part of path ("" for none), malloc'ed. */
static char *ub_plug_dirname(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) + 1 : 0;
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, path, n);
        d[n] = '\0';
    }
    return d;
}

/* The strings of a JSON array (or of one string) into an arena array of
 * interned strings. */
static const char *const *ub_plug_names(ub_plug *p, const ub_json *v,
                                        uint32_t *n)
{
    *n = 0;
    if (!v || (v->kind != UB_JSON_ARRAY && v->kind != UB_JSON_STRING))
        return NULL;
    size_t cnt = v->kind == UB_JSON_ARRAY ? v->n : 1;
    const char **out = ub_arena_alloc(p->r->arena, (cnt + 1) * sizeof *out);
    if (!out) {
        p->oom = true;
        return NULL;
    }
    for (size_t i = 0; i < cnt; i++) {
        const ub_json *e = v->kind == UB_JSON_ARRAY ? &v->items[i] : v;
        if (e->kind == UB_JSON_STRING && (out[*n] = ub_plug_intern(p, e->str)))
            (*n)++;
    }
    return out;
}

static int ub_plug_kind(const char *s)
{
    static const struct {
        const char *name;
        ub_schema_kind kind;
    } kinds[] = {{"concreteTyped", UB_SCHEMA_CONCRETE},
                 {"abstractTyped", UB_SCHEMA_ABSTRACT},
                 {"abstractBase", UB_SCHEMA_ABSTRACT},
                 {"nonAppliedAPI", UB_SCHEMA_NONAPPLIED},
                 {"singleApplyAPI", UB_SCHEMA_SINGLE_API},
                 {"multipleApplyAPI", UB_SCHEMA_MULTI_API}};
    for (size_t i = 0; s && i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(s, kinds[i].name) == 0)
            return (int)kinds[i].kind;
    return -1;
}

/* A token list op's items as OpenUSD applies it to an empty list. */
static const char *const *ub_plug_listop_items(ub_plug *p, const ub_value *v,
                                               uint32_t *n)
{
    *n = 0;
    if (!v || v->kind != UB_V_LISTOP || !v->u.listop)
        return NULL;
    const ub_listop *lo = v->u.listop;
    static const ub_listop_part parts[] = {UB_LO_EXPLICIT, UB_LO_PREPEND,
                                           UB_LO_ADD, UB_LO_APPEND};
    size_t cnt = 0;
    for (size_t k = 0; k < 4; k++)
        if (ub_listop_get(lo, parts[k])->kind == UB_V_DATA)
            cnt += ub_listop_get(lo, parts[k])->count;
    const char **out = ub_arena_alloc(p->r->arena, (cnt + 1) * sizeof *out);
    if (!out) {
        p->oom = true;
        return NULL;
    }
    for (size_t k = lo->is_explicit ? 0 : 1; k < (lo->is_explicit ? 1 : 4);
         k++) {
        const ub_value *e = ub_listop_get(lo, parts[k]);
        for (uint32_t i = 0; e->kind == UB_V_DATA && i < e->count; i++) {
            const char *s = ub_value_str(e, i);
            bool dup = false;
            for (uint32_t j = 0; j < *n && !dup; j++)
                dup = out[j] == s;
            if (!dup)
                out[(*n)++] = s;
        }
    }
    return out;
}

/* Schema `name`'s facts from prim `pr` of a plugin's generatedSchema. */
static void ub_plug_schema_facts(ub_plug *p, const ub_prim *pr,
                                 ub_schema_def *d)
{
    ub_strtab *t = p->r->t;
    const ub_field *f = ub_fields_find(&pr->meta,
                                       ub_intern_cstr(t, "apiSchemas"));
    d->apis = ub_plug_listop_items(p, f ? &f->value : NULL, &d->n_apis);
    f = ub_fields_find(&pr->meta, ub_intern_cstr(t, "customData"));
    if (f && f->value.kind == UB_V_DICT && f->value.u.dict) {
        const ub_dict *dict = f->value.u.dict;
        const char *k = ub_intern_cstr(t, "apiSchemaOverridePropertyNames");
        for (uint32_t i = 0; i < dict->n; i++) {
            const ub_value *v = &dict->e[i].value;
            if (dict->e[i].key != k || v->kind != UB_V_DATA ||
                !ub_value_type(v) ||
                v->type_id != UB_TY_TOKEN)
                continue;
            const char **o = ub_arena_alloc(p->r->arena,
                                            (v->count + 1) * sizeof *o);
            if (!o) {
                p->oom = true;
                return;
            }
            for (uint32_t j = 0; j < v->count; j++)
                o[j] = ub_value_str(v, j);
            d->overrides = o;
            d->n_overrides = v->count;
        }
    }
    ub_schema_prop_fact *props =
        ub_arena_zalloc(p->r->arena, (pr->props.n + 1) * sizeof *props);
    if (!props) {
        p->oom = true;
        return;
    }
    for (uint32_t i = 0; i < pr->props.n; i++) {
        const ub_prop *q = pr->props.v[i];
        ub_schema_prop_fact *o = &props[d->n_props++];
        o->name = q->name;
        o->uniform = q->variability != UB_VARYING;
        if (q->kind == UB_ATTR) {
            char buf[256];
            const char *tn = ub_prop_type_spelling(q);
            snprintf(buf, sizeof buf, "%s%s", tn ? tn : "",
                     q->is_array ? "[]" : "");
            o->type_name = ub_plug_intern(p, buf);
        }
    }
    d->props = props;
}

/* The plugin's schema types: name, kind, base, auto-apply targets; then
 * what its generatedSchema.usda says they hold. */
static void ub_plug_types(ub_plug *p, const char *file, const ub_json *types,
                          const char *resource_dir, const char *plugin)
{
    if (!types || types->kind != UB_JSON_OBJECT)
        return;
    ub_schema_def *defs = calloc(types->n + 1, sizeof *defs);
    const char **bases = calloc(types->n + 1, sizeof *bases);
    size_t nd = 0;
    if (!defs || !bases) {
        p->oom = true;
        goto done;
    }
    for (size_t i = 0; i < types->n; i++) {
        const ub_json *ty = &types->items[i];
        int kind = ub_plug_kind(ub_json_get_str(ty, "schemaKind"));
        if (kind < 0)
            continue;
        const char *alias = ub_json_get_str(ub_json_get(ty, "alias"),
                                            "UsdSchemaBase");
        ub_schema_def *d = &defs[nd];
        d->name = ub_plug_intern(p, alias ? alias : types->keys[i]);
        d->tf_name = ub_plug_intern(p, types->keys[i]);
        d->lib = plugin;
        d->kind = (ub_schema_kind)kind;
        d->auto_to = ub_plug_names(
            p, ub_json_get(ty, "apiSchemaAutoApplyTo"), &d->n_auto_to);
        const ub_json *b = ub_json_get(ty, "bases");
        if (b && b->kind == UB_JSON_ARRAY && b->n &&
            b->items[0].kind == UB_JSON_STRING)
            bases[nd] = b->items[0].str;
        if (d->name && d->tf_name)
            nd++;
    }
    if (!nd || p->oom)
        goto done;
    /* bases name C++ types: this plugin's or any registered one */
    for (size_t i = 0; i < nd; i++) {
        for (size_t k = 0; bases[i] && k < nd && !defs[i].base; k++)
            if (strcmp(defs[k].tf_name, bases[i]) == 0)
                defs[i].base = defs[k].name;
        for (size_t k = 0; bases[i] && k < p->r->n && !defs[i].base; k++)
            if (strcmp(p->r->defs[k].tf_name, bases[i]) == 0)
                defs[i].base = p->r->defs[k].name;
    }
    char *gs = ub_plug_join(resource_dir, "generatedSchema.usda");
    char *text = NULL;
    size_t len = 0;
    ub_layer *l = NULL;
    if (!gs) {
        p->oom = true;
    } else if (ub_read_file(gs, &text, &len, p->diags,
                            (ub_loc){file, 0, 0}) == 0) {
        l = ub_parse_usda(p->r->t, ub_plug_intern(p, gs), text, len,
                          p->diags);
    }
    for (size_t i = 0; i < nd && l; i++) {
        const ub_prim *pr = ub_prim_find_child(l, l->root, defs[i].name);
        if (pr)
            ub_plug_schema_facts(p, pr, &defs[i]);
        else if (defs[i].kind != UB_SCHEMA_ABSTRACT)
            ub_plug_warn(p, (ub_loc){file, 0, 0},
                         "plugin '%s' declares schema '%s' but its %s has "
                         "no class \"%s\"; it defines no properties",
                         plugin, defs[i].name, gs, defs[i].name);
    }
    for (size_t i = 0; i < nd && !p->oom; i++) {
        const ub_schema_def *old = ub_schema_find(p->r, defs[i].name);
        int rc = ub_schema_reg_add(p->r, &defs[i]);
        if (rc < 0)
            p->oom = true;
        else if (rc == 0)
            ub_plug_warn(p, (ub_loc){file, 0, 0},
                         "plugin '%s' defines schema '%s', already defined "
                         "by '%s'; the first definition is kept",
                         plugin, defs[i].name, old->lib);
    }
    ub_layer_free(l);
    free(text);
    free(gs);
done:
    free(defs);
    free(bases);
}

/* "SdfMetadata": { name: { "type": ..., "appliesTo": ... } } */
static void ub_plug_fields(ub_plug *p, const ub_json *md, const char *plugin)
{
    if (!md || md->kind != UB_JSON_OBJECT)
        return;
    for (size_t i = 0; i < md->n && !p->oom; i++) {
        const ub_json *f = &md->items[i];
        const char *type = ub_json_get_str(f, "type");
        if (!type) {
            ub_plug_warn(p, f->loc,
                         "metadata field '%s' of plugin '%s' has no \"type\"; "
                         "it is ignored",
                         md->keys[i], plugin);
            continue;
        }
        unsigned applies = 0;
        uint32_t na;
        const char *const *a = ub_plug_names(p, ub_json_get(f, "appliesTo"),
                                             &na);
        static const char *const where[] = {"layers", "prims", "attributes",
                                            "relationships", "variants"};
        for (uint32_t k = 0; k < na; k++)
            for (unsigned w = 0; w < 5; w++)
                if (strcmp(a[k], where[w]) == 0)
                    applies |= 1u << w;
        if (!ub_json_get(f, "appliesTo"))
            applies = UB_APPLIES_ALL;
        const char *name = ub_plug_intern(p, md->keys[i]);
        if (!name)
            return;
        if (ub_schema_field_find(p->r, name))
            continue; /* the first declaration stands */
        ub_meta_field *nf = ub_arena_grow(p->r->arena, p->r->fields,
                                            p->r->n_fields,
                                            p->r->n_fields + 1,
                                            sizeof *nf);
        if (!nf) {
            p->oom = true;
            return;
        }
        p->r->fields = nf;
        p->r->fields[p->r->n_fields++] = (ub_meta_field){
            .name = name, .type_name = ub_plug_intern(p, type),
            .applies_to = applies, .plugin = plugin, .loc = f->loc};
    }
}

/* "AutoApplyAPISchemas": { api: { "apiSchemaAutoApplyTo": [...] } } */
static void ub_plug_auto_apply(ub_plug *p, const ub_json *aa)
{
    if (!aa || aa->kind != UB_JSON_OBJECT)
        return;
    for (size_t i = 0; i < aa->n && !p->oom; i++) {
        ub_schema_def *d = (ub_schema_def *)ub_schema_find(p->r, aa->keys[i]);
        uint32_t n;
        const char *const *to = ub_plug_names(
            p, ub_json_get(&aa->items[i], "apiSchemaAutoApplyTo"), &n);
        if (!d || !n)
            continue;
        const char **all = ub_arena_alloc(p->r->arena,
                                          (d->n_auto_to + n) * sizeof *all);
        if (!all) {
            p->oom = true;
            return;
        }
        for (uint32_t k = 0; k < d->n_auto_to; k++)
            all[k] = d->auto_to[k];
        for (uint32_t k = 0; k < n; k++)
            all[d->n_auto_to + k] = to[k];
        d->auto_to = all;
        d->n_auto_to += n;
    }
}

static void ub_plug_read_glob(ub_plug *p, const char *path, ub_loc from);

/* One plugInfo.json (path ending in '/': the one in that directory). */
static void ub_plug_read(ub_plug *p, const char *path, ub_loc from)
{
    size_t pn = strlen(path);
    char *file = pn && path[pn - 1] == '/' ? ub_plug_join(path, "plugInfo.json")
                                           : strdup(path);
    if (!file) {
        p->oom = true;
        return;
    }
    for (size_t i = 0; i < p->r->n_visited; i++)
        if (strcmp(p->r->visited[i], file) == 0) {
            free(file);
            return;
        }
    char **v = realloc(p->r->visited,
                       (p->r->n_visited + 1) * sizeof *v);
    if (!v) {
        free(file);
        p->oom = true;
        return;
    }
    p->r->visited = v;
    v[p->r->n_visited++] = file;
    const char *fname = ub_plug_intern(p, file);
    char *text = NULL;
    size_t len = 0;
    ub_arena *ja = ub_arena_new();
    if (!ja || !fname) {
        p->oom = true;
        ub_arena_free(ja);
        return;
    }
    const ub_json *top = NULL;
    struct stat st;
    if (stat(file, &st) != 0)
        /* OpenUSD passes over it in silence */
        ub_plug_warn(p, from, "no plugin info at '%s'; nothing is read "
                              "from there", file);
    else if (ub_read_file(file, &text, &len, p->diags, from) == 0)
        top = ub_json_parse(ja, fname, text, len, p->diags);
    char *dir = ub_plug_dirname(file);
    const ub_json *plugins = ub_json_get(top, "Plugins");
    for (size_t i = 0; dir && plugins && plugins->kind == UB_JSON_ARRAY &&
                       i < plugins->n && !p->oom;
         i++) {
        const ub_json *pl = &plugins->items[i];
        const ub_json *info = ub_json_get(pl, "Info");
        const char *name = ub_plug_intern(p, ub_json_get_str(pl, "Name"));
        if (!info || info->kind != UB_JSON_OBJECT || !name) {
            ub_plug_warn(p, pl->loc,
                         "plugin %zu has no \"Name\" or no \"Info\" object; "
                         "it is skipped, as OpenUSD skips it", i);
            continue;
        }
        const char *root = ub_json_get_str(pl, "Root");
        const char *res = ub_json_get_str(pl, "ResourcePath");
        char *rdir = ub_plug_join(dir, root ? root : "");
        char *resdir = rdir ? ub_plug_join(rdir, res ? res : "") : NULL;
        if (!resdir)
            p->oom = true;
        else
            ub_plug_types(p, fname, ub_json_get(info, "Types"), resdir, name);
        ub_plug_fields(p, ub_json_get(info, "SdfMetadata"), name);
        ub_plug_auto_apply(p, ub_json_get(info, "AutoApplyAPISchemas"));
        free(rdir);
        free(resdir);
    }
    const ub_json *inc = ub_json_get(top, "Includes");
    for (size_t i = 0; dir && inc && inc->kind == UB_JSON_ARRAY &&
                       i < inc->n && !p->oom && p->depth < UB_SCHEMA_MAX_DEPTH;
         i++) {
        if (inc->items[i].kind != UB_JSON_STRING)
            continue;
        char *ip = ub_plug_join(dir, inc->items[i].str);
        if (!ip) {
            p->oom = true;
            break;
        }
        p->depth++;
        ub_plug_read_glob(p, ip, inc->items[i].loc);
        p->depth--;
        free(ip);
    }
    if (!dir)
        p->oom = true;
    free(dir);
    free(text);
    ub_arena_free(ja);
}

/* A path that may hold '*' wildcards (not "**"). */
static void ub_plug_read_glob(ub_plug *p, const char *path, ub_loc from)
{
    if (!strchr(path, '*')) {
        ub_plug_read(p, path, from);
        return;
    }
    if (strstr(path, "**")) {
        ub_plug_warn(p, from,
                     "plugin path '%s': recursive '**' patterns are not "
                     "supported; list the directories, or use '*'",
                     path);
        return;
    }
    glob_t g;
    int rc = glob(path, GLOB_MARK, NULL, &g);
    if (rc == GLOB_NOSPACE)
        p->oom = true;
    for (size_t i = 0; rc == 0 && i < g.gl_pathc && !p->oom; i++) {
        size_t n = strlen(g.gl_pathv[i]);
        /* "dir/" patterns name directories: only those */
        bool want_dir = path[strlen(path) - 1] == '/';
        if (want_dir == (n && g.gl_pathv[i][n - 1] == '/'))
            ub_plug_read(p, g.gl_pathv[i], from);
    }
    if (rc == 0)
        globfree(&g);
}

int ub_schema_reg_load_plugins(ub_schema_reg *r, const char *pluginpath,
                               ub_diags *diags)
{
    ub_plug p = {.r = r, .diags = diags};
    const char *s = pluginpath ? pluginpath : "";
    while (*s && !p.oom) {
        const char *e = strchr(s, ':');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        char *one = n ? malloc(n + 2) : NULL;
        if (n && !one)
            return -1;
        if (one) {
            memcpy(one, s, n);
            one[n] = '\0';
            struct stat st;
            /* a directory named without its '/' is one too */
            if (one[n - 1] != '/' && !strchr(one, '*') &&
                stat(one, &st) == 0 && S_ISDIR(st.st_mode)) {
                one[n] = '/';
                one[n + 1] = '\0';
            }
            ub_plug_read_glob(&p, one, (ub_loc){"PXR_PLUGINPATH_NAME", 0, 0});
            free(one);
        }
        s += n;
        if (*s == ':')
            s++;
    }
    if (!p.oom && ub_schema_reg_index(r) != 0)
        p.oom = true;
    return p.oom ? -1 : 0;
}
