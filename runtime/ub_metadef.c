#include "ub_metadef.h"

#include <string.h>


const char *const ub_metadef_keywords[UB_METADEF_NKEYWORDS] = {
    "add", "append", "class", "config", "connect", "custom", "customData",
    "def", "default", "delete", "dictionary", "displayUnit", "doc",
    "inherits", "kind", "nameChildren", "None", "offset", "over", "payload",
    "permission", "prefixSubstitutions", "prepend", "properties",
    "references", "relocates", "rel", "reorder", "rootPrims", "scale",
    "subLayers", "suffixSubstitutions", "specializes", "symmetryArguments",
    "symmetryFunction", "timeSamples", "uniform", "variantSet",
    "variantSets", "variants", "varying",
};

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

bool ub_metadef_display_unit_ok(const char *s)
{
    static const char *const units[] = {"mm", "cm", "dm", "m", "km", "in",
                                        "ft", "yd", "mi", "deg", "rad",
                                        "default", NULL};
    return md_in(units, s);
}
