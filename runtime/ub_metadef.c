#include "ub_metadef.h"

#include <stdio.h>
#include <string.h>

#include "ub_ident.h"
#include "ub_intern.h"

enum { L = 1, P = 2, A = 4, R = 8, PROP = A | R, ALL = L | P | A | R };

/* Metadata fields OpenUSD 24.08 types with the plugins usdcat loads (Sdf's
 * schema, usd, usdGeom, usdShade, usdPhysics, usdRender, usdSkel,
 * usdImaging, and the testSdfParsing list-op fields). */
static const ub_metadef md_typed[] = {
    {"colorConfiguration", L, UB_MD_TYPED, UB_TY_ASSET, 0},
    {"colorManagementSystem", L, UB_MD_TYPED, UB_TY_TOKEN, 0},
    {"customLayerData", L, UB_MD_DICT, 0, 0},
    {"defaultPrim", L, UB_MD_TYPED, UB_TY_TOKEN, 0},
    {"documentation", ALL, UB_MD_TYPED, UB_TY_STRING, 0},
    {"endTimeCode", L, UB_MD_TYPED, UB_TY_DOUBLE, 0},
    {"expressionVariables", L, UB_MD_DICT, 0, 0},
    {"framesPerSecond", L, UB_MD_TYPED, UB_TY_DOUBLE, 0},
    {"framePrecision", L, UB_MD_TYPED, UB_TY_INT, 0},
    {"hasOwnedSubLayers", L, UB_MD_TYPED, UB_TY_BOOL, 0},
    {"owner", L, UB_MD_TYPED, UB_TY_STRING, 0},
    {"sessionOwner", L, UB_MD_TYPED, UB_TY_STRING, 0},
    {"startTimeCode", L, UB_MD_TYPED, UB_TY_DOUBLE, 0},
    {"timeCodesPerSecond", L, UB_MD_TYPED, UB_TY_DOUBLE, 0},
    {"endFrame", L, UB_MD_TYPED, UB_TY_DOUBLE, 0},
    {"startFrame", L, UB_MD_TYPED, UB_TY_DOUBLE, 0},
    {"fallbackPrimTypes", L, UB_MD_DICT, 0, 0},
    {"metersPerUnit", L, UB_MD_TYPED, UB_TY_DOUBLE, 0},
    {"upAxis", L, UB_MD_TYPED, UB_TY_TOKEN, 0},
    {"kilogramsPerUnit", L, UB_MD_TYPED, UB_TY_DOUBLE, 0},
    {"renderSettingsPrimPath", L, UB_MD_TYPED, UB_TY_STRING, 0},
    {"active", P, UB_MD_TYPED, UB_TY_BOOL, 0},
    {"assetInfo", P | PROP, UB_MD_DICT, 0, 0},
    {"customData", P | PROP, UB_MD_DICT, 0, 0},
    {"displayGroupOrder", P, UB_MD_TYPED, UB_TY_STRING, 1},
    {"displayName", P | PROP, UB_MD_TYPED, UB_TY_STRING, 0},
    {"hidden", P | PROP, UB_MD_TYPED, UB_TY_BOOL, 0},
    {"instanceable", P, UB_MD_TYPED, UB_TY_BOOL, 0},
    {"prefix", P | PROP, UB_MD_TYPED, UB_TY_STRING, 0},
    {"suffix", P | PROP, UB_MD_TYPED, UB_TY_STRING, 0},
    {"symmetricPeer", P | PROP, UB_MD_TYPED, UB_TY_STRING, 0},
    {"symmetryArguments", P | PROP, UB_MD_DICT, 0, 0},
    {"typeName", P, UB_MD_TYPED, UB_TY_TOKEN, 0},
    {"apiSchemas", P, UB_MD_LISTOP, UB_TY_TOKEN, 0},
    {"clipSets", P, UB_MD_LISTOP, UB_TY_STRING, 0},
    {"clips", P, UB_MD_DICT, 0, 0},
    {"payloadAssetDependencies", P, UB_MD_TYPED, UB_TY_ASSET, 1},
    {"inactiveIds", P, UB_MD_LISTOP, UB_TY_INT64, 0},
    {"sdrMetadata", P | A, UB_MD_DICT, 0, 0},
    {"displayGroup", PROP, UB_MD_TYPED, UB_TY_STRING, 0},
    {"allowedTokens", A, UB_MD_TYPED, UB_TY_TOKEN, 1},
    {"colorSpace", A, UB_MD_TYPED, UB_TY_TOKEN, 0},
    {"constraintTargetIdentifier", A, UB_MD_TYPED, UB_TY_TOKEN, 0},
    {"elementSize", A, UB_MD_TYPED, UB_TY_INT, 0},
    {"interpolation", A, UB_MD_TYPED, UB_TY_TOKEN, 0},
    {"unauthoredValuesIndex", A, UB_MD_TYPED, UB_TY_INT, 0},
    {"connectability", A, UB_MD_TYPED, UB_TY_TOKEN, 0},
    {"weight", A, UB_MD_TYPED, UB_TY_FLOAT, 0},
    {"faceIndexPrimvar", A, UB_MD_TYPED, UB_TY_TOKEN, 0},
    {"faceOffsetPrimvar", A, UB_MD_TYPED, UB_TY_TOKEN, 0},
    {"uvPrimvar", A, UB_MD_TYPED, UB_TY_TOKEN, 0},
    {"renderType", PROP, UB_MD_TYPED, UB_TY_TOKEN, 0},
    {"noLoadHint", R, UB_MD_TYPED, UB_TY_BOOL, 0},
    {"bindMaterialAs", R, UB_MD_TYPED, UB_TY_TOKEN, 0},
    {"outputName", R, UB_MD_TYPED, UB_TY_TOKEN, 0},
    {"intListOpTest", ALL, UB_MD_LISTOP, UB_TY_INT, 0},
    {"int64ListOpTest", ALL, UB_MD_LISTOP, UB_TY_INT64, 0},
    {"uintListOpTest", ALL, UB_MD_LISTOP, UB_TY_UINT, 0},
    {"uint64ListOpTest", ALL, UB_MD_LISTOP, UB_TY_UINT64, 0},
    {"stringListOpTest", ALL, UB_MD_LISTOP, UB_TY_STRING, 0},
    {"tokenListOpTest", ALL, UB_MD_LISTOP, UB_TY_TOKEN, 0},
};

const ub_metadef *ub_metadef_find(const char *key, ub_spec_kind spec)
{
    unsigned bit = UB_MD_ON(spec);
    for (size_t i = 0; i < sizeof md_typed / sizeof *md_typed; i++)
        if ((md_typed[i].specs & bit) && strcmp(md_typed[i].key, key) == 0)
            return &md_typed[i];
    return NULL;
}

static bool md_in(const char *const *l, const char *key)
{
    for (; *l; l++)
        if (strcmp(*l, key) == 0)
            return true;
    return false;
}

/* OpenUSD refuses to set these with `key = value` ("registered as a
 * non-metadata field"). */
bool ub_metadef_not_metadata(const char *key, ub_spec_kind spec)
{
    static const char *const layer[] = {"comment", "primChildren",
                                        "primOrder", "subLayerOffsets",
                                        NULL};
    static const char *const prim[] = {
        "specifier", "comment", "inheritPaths", "primChildren", "primOrder",
        "propertyOrder", "variantSelection", "variantSetChildren",
        "variantSetNames", NULL};
    static const char *const attr[] = {"variability", "comment", "typeName",
                                       "connectionChildren",
                                       "connectionPaths", NULL};
    static const char *const rel[] = {"variability", "comment",
                                      "targetChildren", "targetPaths", NULL};
    return md_in(spec == UB_SPEC_LAYER  ? layer
                 : spec == UB_SPEC_PRIM ? prim
                 : spec == UB_SPEC_ATTR ? attr
                                        : rel,
                 key);
}

/* The fields with a syntax of their own (parser.y's layer_metadata,
 * prim_metadata, attribute_metadata and relationship_metadata; "comment"
 * for the bare string), and the specs each is on. */
enum md_special {
    MS_NONE, MS_COMMENT, MS_DOC, MS_KIND, MS_PERMISSION, MS_PAYLOAD,
    MS_INHERITS, MS_SPECIALIZES, MS_REFERENCES, MS_RELOCATES, MS_VARIANTS,
    MS_VARIANT_SETS, MS_SYMMETRY_FUNCTION, MS_PREFIX_SUBSTITUTIONS,
    MS_SUFFIX_SUBSTITUTIONS, MS_DISPLAY_UNIT, MS_COUNT
};
static const struct {
    const char *key;
    unsigned specs;
} md_specials[MS_COUNT] = {
    [MS_COMMENT] = {"comment", ALL},
    [MS_DOC] = {"doc", ALL},
    [MS_KIND] = {"kind", P},
    [MS_PERMISSION] = {"permission", P | PROP},
    [MS_PAYLOAD] = {"payload", P},
    [MS_INHERITS] = {"inherits", P},
    [MS_SPECIALIZES] = {"specializes", P},
    [MS_REFERENCES] = {"references", P},
    [MS_RELOCATES] = {"relocates", L | P},
    [MS_VARIANTS] = {"variants", P},
    [MS_VARIANT_SETS] = {"variantSets", P},
    [MS_SYMMETRY_FUNCTION] = {"symmetryFunction", P | PROP},
    [MS_PREFIX_SUBSTITUTIONS] = {"prefixSubstitutions", P},
    [MS_SUFFIX_SUBSTITUTIONS] = {"suffixSubstitutions", P},
    [MS_DISPLAY_UNIT] = {"displayUnit", A},
};

const char *ub_metadef_value_fault(const ub_metadef *d, const ub_value *v)
{
    double x;
    /* (a few layer fields are doubles: the name is compared for those) */
    if (d->kind != UB_MD_TYPED || d->type != UB_TY_DOUBLE || d->array ||
        v->kind != UB_V_DATA || v->count != 1 ||
        v->type_id != UB_TY_DOUBLE || strcmp(d->key, "framesPerSecond") != 0)
        return NULL;
    memcpy(&x, ub_value_data(v), sizeof x);
    return x > 0.0 ? NULL : "it must be greater than 0";
}

bool ub_metadef_display_unit_ok(const char *s)
{
    static const char *const units[] = {"mm", "cm", "dm", "m", "km", "in",
                                        "ft", "yd", "mi", "deg", "rad",
                                        "default", NULL};
    return md_in(units, s);
}

static bool md_scalar(const ub_value *v, ub_type_id t)
{
    return v->kind == UB_V_DATA && !v->is_array && v->count == 1 &&
           v->type_id == t;
}

static bool md_listop_of(const ub_value *v, ub_type_id t)
{
    return v->kind == UB_V_LISTOP && v->type_id == t;
}

/* Whether s is a variant (set) name, as the text's list of them takes it. */
static bool md_variant_name_ok(const char *s)
{
    return ub_ident_variant_ok(s, ub_str_len(s));
}

/* A dictionary whose values are all strings (variants, substitutions). */
static bool md_string_dict(const ub_value *v)
{
    if (v->kind != UB_V_DICT)
        return false;
    for (uint32_t i = 0; v->u.dict && i < v->u.dict->n; i++)
        if (!md_scalar(&v->u.dict->e[i].value, UB_TY_STRING))
            return false;
    return true;
}

/* The shape of a field with a syntax of its own (runtime/ub_layer.h);
 * NULL when v has it. */
static const char *md_special_fault(enum md_special which, const ub_value *v)
{
    switch (which) {
    case MS_COMMENT:
    case MS_DOC:
        return md_scalar(v, UB_TY_STRING) ? NULL : "expected a string";
    case MS_REFERENCES:
        return md_listop_of(v, UB_TY_REFERENCE) ? NULL
                                                : "expected references";
    case MS_PAYLOAD:
        return md_listop_of(v, UB_TY_PAYLOAD) ? NULL : "expected payloads";
    case MS_INHERITS:
    case MS_SPECIALIZES:
        if (!md_listop_of(v, UB_TY_PATH))
            return "expected a list op of paths";
        /* the text's are prim paths, made absolute as they are read */
        return !ub_listop_str_refused(v, ub_ident_prim_path_ok)
                   ? NULL
                   : "expected absolute prim paths without variant "
                     "selections";
    case MS_VARIANT_SETS:
        if (!md_listop_of(v, UB_TY_STRING) && !md_listop_of(v, UB_TY_TOKEN))
            return "expected a list op of names";
        return !ub_listop_str_refused(v, md_variant_name_ok)
                   ? NULL
                   : "expected variant set names";
    case MS_VARIANTS:
        if (!md_string_dict(v))
            return "expected a dictionary of strings";
        /* each a variant name, or a variable expression ("`...`") */
        for (uint32_t i = 0; v->u.dict && i < v->u.dict->n; i++) {
            const char *sel = ub_value_str(&v->u.dict->e[i].value, 0);
            size_t n = ub_str_len(sel);
            bool expr = n > 2 && sel[0] == '`' && sel[n - 1] == '`' &&
                        !memchr(sel, '\0', n);
            if (!expr && !ub_ident_variant_ok(sel, n))
                return "expected variant selections";
        }
        return NULL;
    case MS_PREFIX_SUBSTITUTIONS:
    case MS_SUFFIX_SUBSTITUTIONS:
        if (!md_string_dict(v))
            return "expected a dictionary of strings";
        /* (the usda reader refuses an empty key) */
        for (uint32_t i = 0; v->u.dict && i < v->u.dict->n; i++)
            if (!*v->u.dict->e[i].key)
                return "expected a dictionary of strings without an empty "
                       "key";
        return NULL;
    case MS_RELOCATES:
        if (v->kind != UB_V_DATA || !v->is_array ||
            v->type_id != UB_TY_PATH || v->count % 2)
            return "expected pairs of paths";
        /* as the text's are made: absolute prim paths, a target <> */
        for (uint32_t i = 0; i < v->count; i++) {
            const char *s = ub_value_str(v, i);
            if (!(i % 2 && !*s) && !ub_ident_prim_path_ok(s))
                return "expected pairs of absolute prim paths (a target "
                       "may be <>)";
        }
        return NULL;
    default:
        break;
    }
    /* the rest are tokens the text says bare or quoted */
    if (!md_scalar(v, UB_TY_TOKEN))
        return "expected a token";
    const char *s = ub_value_str(v, 0);
    size_t n = ub_str_len(s);
    switch (which) {
    case MS_PERMISSION:
        return strcmp(s, "public") == 0 || strcmp(s, "private") == 0
                   ? NULL
                   : "expected a permission: public or private";
    case MS_DISPLAY_UNIT:
        return ub_metadef_display_unit_ok(s) ? NULL
                                             : "expected a display unit";
    case MS_SYMMETRY_FUNCTION:
        return n == 0 || ub_ident_cxx_ok(s, n)
                   ? NULL
                   : "expected an identifier or nothing";
    default: /* kind */
        return memchr(s, '\0', n) ? "expected a token without a NUL byte"
                                   : NULL;
    }
}

/* Whether `key = v` says v for a field the text does not know, which it
 * reads as an untyped value: numbers, strings, asset paths, tuples and
 * lists of them, dictionaries, None, and one path. */
static bool md_unknown_ok(const ub_value *v)
{
    const ub_type *t = ub_value_type(v);
    switch (v->kind) {
    case UB_V_BLOCK:
    case UB_V_UNTYPED:
    case UB_V_DICT:
        return true;
    case UB_V_DATA:
        if (!t || t->scalar == UB_SC_REF || t->scalar == UB_SC_DICT ||
            t->scalar == UB_SC_OPAQUE)
            return false;
        return t->id != UB_TY_PATH || (!v->is_array && v->count == 1);
    case UB_V_LISTOP:
        return !t || (t->scalar != UB_SC_REF && t->id != UB_TY_PATH);
    }
    return false;
}

/* A list op whose parts repeat an item, which the usda reader refuses
 * ("duplicate items in the list"); NULL for any other value. */
static const char *md_twice(const ub_value *v)
{
    return v->kind == UB_V_LISTOP && ub_listop_has_dup(v)
               ? "a part of the list op holds an item twice"
               : NULL;
}

static const char *md_spec_name(ub_spec_kind spec)
{
    return spec == UB_SPEC_LAYER  ? "a layer"
           : spec == UB_SPEC_PRIM ? "a prim"
           : spec == UB_SPEC_ATTR ? "an attribute"
                                  : "a relationship";
}

/* What v is, for a message: "a value of type float3[]", "a dictionary",
 * ... */
static const char *md_found(const ub_value *v, char *buf, size_t cap)
{
    const ub_type *t = ub_value_type(v);
    switch (v->kind) {
    case UB_V_DATA:
        if (t) {
            snprintf(buf, cap, "a value of type %s%s", t->name,
                     v->is_array ? "[]" : "");
            return buf;
        }
        return "data without a type";
    case UB_V_DICT:
        return "a dictionary";
    case UB_V_LISTOP:
        if (t) {
            snprintf(buf, cap, "a list op of %s", t->name);
            return buf;
        }
        return "a list op";
    case UB_V_UNTYPED:
        return "an unregistered value";
    case UB_V_BLOCK:
        return "None";
    }
    return "nothing";
}

ub_metadef_role ub_metadef_role_of(const char *key, ub_spec_kind spec)
{
    ub_metadef_role r = {NULL, UB_MDR_UNKNOWN, MS_NONE};
    for (int i = MS_NONE + 1; i < MS_COUNT; i++)
        if ((md_specials[i].specs & UB_MD_ON(spec)) &&
            strcmp(md_specials[i].key, key) == 0) {
            r.how = UB_MDR_SPECIAL;
            r.special = (unsigned char)i;
            return r;
        }
    if ((r.def = ub_metadef_find(key, spec))) {
        r.how = UB_MDR_TYPED;
        return r;
    }
    if (ub_metadef_not_metadata(key, spec)) {
        r.how = UB_MDR_NOT_METADATA;
        return r;
    }
    /* a reserved word that is no field of this spec cannot be a key */
    if (ub_ident_keyword(key, ub_str_len(key))) {
        r.how = UB_MDR_RESERVED;
        return r;
    }
    if (!ub_ident_cxx_ok(key, ub_str_len(key)))
        r.how = UB_MDR_NOT_IDENT;
    return r;
}

const char *ub_metadef_check(const ub_metadef_role *role, const char *key,
                             ub_spec_kind spec, const ub_value *v, char *buf,
                             size_t cap)
{
    char found[64];
    const ub_metadef *d = role->def;
    switch ((ub_metadef_how)role->how) {
    case UB_MDR_SPECIAL: {
        const char *why =
            md_special_fault((enum md_special)role->special, v);
        if (!why)
            return md_twice(v);
        snprintf(buf, cap, "%s, found %s", why,
                 md_found(v, found, sizeof found));
        return buf;
    }
    case UB_MDR_TYPED: {
        /* (an unregistered value holds the text OpenUSD read for a field
         * it did not know, as a usdcat without the field's plugin stores
         * it: the text is read by the field's type again) */
        if (v->kind == UB_V_UNTYPED ||
            (v->kind == UB_V_LISTOP && !ub_value_type(v)))
            return NULL;
        const ub_type *t =
            d->kind != UB_MD_DICT ? ub_type_get(d->type) : NULL;
        bool ok = d->kind == UB_MD_DICT     ? v->kind == UB_V_DICT
                  : d->kind == UB_MD_LISTOP ? md_listop_of(v, d->type)
                                            : v->kind == UB_V_DATA &&
                                                  v->type_id == d->type &&
                                                  v->is_array == d->array &&
                                                  (d->array || v->count == 1);
        if (ok) {
            const char *why = ub_metadef_value_fault(d, v);
            return why ? why : md_twice(v);
        }
        if (d->kind == UB_MD_DICT)
            snprintf(buf, cap, "expected a dictionary, found %s",
                     md_found(v, found, sizeof found));
        else
            snprintf(buf, cap, "expected %s %s%s, found %s",
                     d->kind == UB_MD_LISTOP ? "a list op of"
                                             : "a value of type",
                     t->name, d->array ? "[]" : "",
                     md_found(v, found, sizeof found));
        return buf;
    }
    case UB_MDR_NOT_METADATA:
        snprintf(buf, cap, "'%s' is not metadata of %s", key,
                 md_spec_name(spec));
        return buf;
    case UB_MDR_RESERVED:
        snprintf(buf, cap, "'%s' has no place on %s", key,
                 md_spec_name(spec));
        return buf;
    case UB_MDR_NOT_IDENT:
        snprintf(buf, cap, "'%s' is not an identifier, as a field's name "
                 "must be", key);
        return buf;
    case UB_MDR_UNKNOWN:
        break;
    }
    if (!md_unknown_ok(v)) {
        snprintf(buf, cap, "a field usdbake does not know cannot hold %s",
                 md_found(v, found, sizeof found));
        return buf;
    }
    return NULL;
}
