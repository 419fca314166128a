/*
 * ub_crate_format — the constants of OpenUSD's crate (usdc) binary format,
 * shared by the crate reader (runtime/) and the crate writer (backend/).
 *
 * Facts of the format as OpenUSD 24.08 reads and writes it; doc/usdc.md
 * describes the layout these constants belong to.  Numbers are the ones
 * stored in files: never renumber them.
 */
#ifndef UB_CRATE_FORMAT_H
#define UB_CRATE_FORMAT_H

#include <stdint.h>

/* The file starts with this 8-byte identifier, then the version bytes
 * (major, minor, patch), then padding, then the table of contents' file
 * offset as a little-endian int64 at byte 16.  The bootstrap header is
 * 88 bytes. */
#define UB_CRATE_IDENT "PXR-USDC"
#define UB_CRATE_IDENT_LEN 8
#define UB_CRATE_BOOTSTRAP_SIZE 88

/* A section entry of the table of contents: a NUL-padded 16-byte name,
 * then start and size as int64. */
#define UB_CRATE_SECTION_NAME_LEN 16
#define UB_CRATE_SECTION_ENTRY_SIZE 32

#define UB_CRATE_SEC_TOKENS "TOKENS"
#define UB_CRATE_SEC_STRINGS "STRINGS"
#define UB_CRATE_SEC_FIELDS "FIELDS"
#define UB_CRATE_SEC_FIELDSETS "FIELDSETS"
#define UB_CRATE_SEC_PATHS "PATHS"
#define UB_CRATE_SEC_SPECS "SPECS"

/* Versions as one comparable number: (major << 16) | (minor << 8) | patch. */
#define UB_CRATE_VERSION(maj, min, pat) \
    (((uint32_t)(maj) << 16) | ((uint32_t)(min) << 8) | (uint32_t)(pat))
/* The newest version OpenUSD 24.08 reads and writes. */
#define UB_CRATE_VERSION_MAX UB_CRATE_VERSION(0, 11, 0)
/* The version usdbake writes unless a value needs a newer one.  OpenUSD
 * 24.08 itself writes 0.9.0 by default; 0.8.0 holds every layer that has
 * no timecode, pathExpression or relocates value, and older readers (back
 * to OpenUSD 20.x) open it too. */
#define UB_CRATE_VERSION_DEFAULT UB_CRATE_VERSION(0, 8, 0)

/* What each version changed, for the reader's branches and the writer's
 * upgrades:
 *   0.1.0  path item headers lose 0.0.1's 4 bytes of padding (12 bytes
 *          instead of 16), and specs likewise
 *   0.2.0  list ops gain prepended and appended items
 *   0.4.0  structural sections compressed
 *   0.5.0  (u)int and (u)int64 arrays compressed; arrays no longer store
 *          a leading rank of 1
 *   0.6.0  float, double and half arrays compressed (all integral values,
 *          or a lookup table)
 *   0.7.0  array sizes are 64-bit
 *   0.8.0  SdfPayloadListOp, and payloads with layer offsets
 *   0.9.0  timecode and timecode[] values
 *   0.10.0 pathExpression values
 *   0.11.0 relocates in layer metadata */
#define UB_CRATE_V_NO_PATH_PADDING UB_CRATE_VERSION(0, 1, 0)
#define UB_CRATE_V_PREPEND_APPEND UB_CRATE_VERSION(0, 2, 0)
#define UB_CRATE_V_COMPRESSED_SECTIONS UB_CRATE_VERSION(0, 4, 0)
#define UB_CRATE_V_COMPRESSED_INTS UB_CRATE_VERSION(0, 5, 0)
#define UB_CRATE_V_COMPRESSED_FLOATS UB_CRATE_VERSION(0, 6, 0)
#define UB_CRATE_V_64BIT_ARRAY_SIZES UB_CRATE_VERSION(0, 7, 0)
#define UB_CRATE_V_PAYLOAD_LISTOP UB_CRATE_VERSION(0, 8, 0)
#define UB_CRATE_V_TIMECODE UB_CRATE_VERSION(0, 9, 0)
#define UB_CRATE_V_PATH_EXPRESSION UB_CRATE_VERSION(0, 10, 0)
#define UB_CRATE_V_RELOCATES UB_CRATE_VERSION(0, 11, 0)

/* A value representation: 8 bytes, the top 16 bits flags and type, the
 * low 48 bits either the value itself (inlined) or a file offset. */
#define UB_CRATE_REP_IS_ARRAY (1ull << 63)
#define UB_CRATE_REP_IS_INLINED (1ull << 62)
#define UB_CRATE_REP_IS_COMPRESSED (1ull << 61)
#define UB_CRATE_REP_TYPE_SHIFT 48
#define UB_CRATE_REP_TYPE_MASK 0xffull
#define UB_CRATE_REP_PAYLOAD_MASK ((1ull << 48) - 1)

/* Value type numbers, as stored in a value representation. */
typedef enum ub_crate_type {
    UB_CRATE_INVALID = 0,
    UB_CRATE_BOOL = 1,
    UB_CRATE_UCHAR = 2,
    UB_CRATE_INT = 3,
    UB_CRATE_UINT = 4,
    UB_CRATE_INT64 = 5,
    UB_CRATE_UINT64 = 6,
    UB_CRATE_HALF = 7,
    UB_CRATE_FLOAT = 8,
    UB_CRATE_DOUBLE = 9,
    UB_CRATE_STRING = 10,
    UB_CRATE_TOKEN = 11,
    UB_CRATE_ASSET_PATH = 12,
    UB_CRATE_MATRIX2D = 13,
    UB_CRATE_MATRIX3D = 14,
    UB_CRATE_MATRIX4D = 15,
    UB_CRATE_QUATD = 16,
    UB_CRATE_QUATF = 17,
    UB_CRATE_QUATH = 18,
    UB_CRATE_VEC2D = 19,
    UB_CRATE_VEC2F = 20,
    UB_CRATE_VEC2H = 21,
    UB_CRATE_VEC2I = 22,
    UB_CRATE_VEC3D = 23,
    UB_CRATE_VEC3F = 24,
    UB_CRATE_VEC3H = 25,
    UB_CRATE_VEC3I = 26,
    UB_CRATE_VEC4D = 27,
    UB_CRATE_VEC4F = 28,
    UB_CRATE_VEC4H = 29,
    UB_CRATE_VEC4I = 30,
    UB_CRATE_DICTIONARY = 31,
    UB_CRATE_TOKEN_LISTOP = 32,
    UB_CRATE_STRING_LISTOP = 33,
    UB_CRATE_PATH_LISTOP = 34,
    UB_CRATE_REFERENCE_LISTOP = 35,
    UB_CRATE_INT_LISTOP = 36,
    UB_CRATE_INT64_LISTOP = 37,
    UB_CRATE_UINT_LISTOP = 38,
    UB_CRATE_UINT64_LISTOP = 39,
    UB_CRATE_PATH_VECTOR = 40,
    UB_CRATE_TOKEN_VECTOR = 41,
    UB_CRATE_SPECIFIER = 42,
    UB_CRATE_PERMISSION = 43,
    UB_CRATE_VARIABILITY = 44,
    UB_CRATE_VARIANT_SELECTION_MAP = 45,
    UB_CRATE_TIME_SAMPLES = 46,
    UB_CRATE_PAYLOAD = 47,
    UB_CRATE_DOUBLE_VECTOR = 48,
    UB_CRATE_LAYER_OFFSET_VECTOR = 49,
    UB_CRATE_STRING_VECTOR = 50,
    UB_CRATE_VALUE_BLOCK = 51,
    UB_CRATE_VALUE = 52,
    UB_CRATE_UNREGISTERED_VALUE = 53,
    UB_CRATE_UNREGISTERED_VALUE_LISTOP = 54,
    UB_CRATE_PAYLOAD_LISTOP = 55,
    UB_CRATE_TIME_CODE = 56,
    UB_CRATE_PATH_EXPRESSION = 57,
    UB_CRATE_RELOCATES = 58,
    UB_CRATE_TYPE_COUNT
} ub_crate_type;

/* Spec types (SdfSpecType), as stored in the SPECS section. */
typedef enum ub_crate_spec_type {
    UB_CRATE_SPEC_UNKNOWN = 0,
    UB_CRATE_SPEC_ATTRIBUTE = 1,
    UB_CRATE_SPEC_CONNECTION = 2,
    UB_CRATE_SPEC_EXPRESSION = 3,
    UB_CRATE_SPEC_MAPPER = 4,
    UB_CRATE_SPEC_MAPPER_ARG = 5,
    UB_CRATE_SPEC_PRIM = 6,
    UB_CRATE_SPEC_PSEUDO_ROOT = 7,
    UB_CRATE_SPEC_RELATIONSHIP = 8,
    UB_CRATE_SPEC_RELATIONSHIP_TARGET = 9,
    UB_CRATE_SPEC_VARIANT = 10,
    UB_CRATE_SPEC_VARIANT_SET = 11,
} ub_crate_spec_type;

/* Bits of a path item header in the PATHS section. */
#define UB_CRATE_PATH_HAS_CHILD (1u << 0)
#define UB_CRATE_PATH_HAS_SIBLING (1u << 1)
#define UB_CRATE_PATH_IS_PROPERTY (1u << 2)

/* Bits of a list op's header byte. */
#define UB_CRATE_LISTOP_IS_EXPLICIT (1u << 0)
#define UB_CRATE_LISTOP_HAS_EXPLICIT (1u << 1)
#define UB_CRATE_LISTOP_HAS_ADDED (1u << 2)
#define UB_CRATE_LISTOP_HAS_DELETED (1u << 3)
#define UB_CRATE_LISTOP_HAS_ORDERED (1u << 4)
#define UB_CRATE_LISTOP_HAS_PREPENDED (1u << 5)
#define UB_CRATE_LISTOP_HAS_APPENDED (1u << 6)

/* Arrays of fewer elements than this are stored plainly even where the
 * version allows compression. */
#define UB_CRATE_MIN_COMPRESSED_ARRAY 16

#endif
