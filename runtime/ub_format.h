/*
 * ub_format — values as text, exactly as OpenUSD 24.08 prints them.
 *
 * One implementation for everything that prints a value: the usda writer,
 * diagnostics, the binary-to-text path.  Numbers follow OpenUSD's choices:
 *
 *   double   shortest text that reads back as the same double
 *            (TfStringify: double-conversion ToShortest, decimal notation
 *            for decimal exponents -6..14, else "1e21", "1e-7": no '+', no
 *            exponent padding)
 *   float    shortest text that reads back as the same float
 *   half     iostream's default for the half widened to float: %g with six
 *            significant digits (1.807h prints 1.80664)
 *   timecode iostream's default for a double: %g, six digits
 *   ints     decimal; uchar as a number; bool as 0/1 inside values
 *   inf, -inf, nan  ("nan" whatever its sign: iostream's "-nan" for a
 *            half or timecode would not read back)
 *
 * The ub_fmt_* functions write into a caller buffer of at least UB_FMT_MAX
 * bytes, add no NUL and return the length; they never allocate.
 */
#ifndef UB_FORMAT_H
#define UB_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "ub_buf.h"
#include "ub_value.h"

#define UB_FMT_MAX 40

size_t ub_fmt_double(char *out, double v);
size_t ub_fmt_float(char *out, float v);
size_t ub_fmt_half(char *out, uint16_t bits);
size_t ub_fmt_g6(char *out, double v); /* %g: timecode, half */
size_t ub_fmt_i64(char *out, int64_t v);
size_t ub_fmt_u64(char *out, uint64_t v);

/* Shortest round-trip decimal digits of a finite, nonzero |v|:
 * |v| == digits * 10^exp10 read back to the same double / float. */
void ub_shortest_double(double v, uint64_t *digits, int *exp10);
void ub_shortest_float(float v, uint32_t *digits, int *exp10);

/* Append helpers. */
void ub_put_double(ub_buf *b, double v);
void ub_put_i64(ub_buf *b, int64_t v);
void ub_put_u64(ub_buf *b, uint64_t v);

/* The value of a quoted string's body s[0..n) as OpenUSD evaluates its
 * escapes (Sdf_EvalQuotedString): C escapes, \xHH (up to two digits), \ooo
 * (up to three octal digits), any other escaped character standing for
 * itself.  out has room for n bytes; returns the length written. */
size_t ub_unescape(char *out, const char *s, size_t n);

/* A string as usda quotes it: double quotes unless the text has '"' and
 * no '\'', triple quotes when it has a newline; escapes as OpenUSD does
 * (\n \r \t \\, the quote, \xNN for non-printable bytes that are not
 * valid UTF-8). */
void ub_put_quoted(ub_buf *b, const char *s, size_t n);
/* An asset path: @path@, or @@@path@@@ when it contains '@'. */
void ub_put_asset(ub_buf *b, const char *s, size_t n);
/* A path: <path>. */
void ub_put_path(ub_buf *b, const char *s, size_t n);

/* A layer offset as OpenUSD writes it after an asset: " (offset = 1;
 * scale = 2)" with only the non-default parts; nothing for identity. */
void ub_put_offset(ub_buf *b, ub_offset o);
/* A reference or payload without its metadata: @asset@</path>, or </path>
 * (<> for the default prim) when it is internal. */
void ub_put_reference_target(ub_buf *b, const ub_reference *r);

/* Component c of element elem (of type t) as text. */
void ub_put_component(ub_buf *b, const ub_type *t, const void *elem,
                      unsigned c);
/* One element: a scalar, "(x, y, z)" for tuples, "( (..), (..) )" for
 * matrices, quoted strings, @assets@, <paths>, references and payloads
 * with their inline layer offset. */
void ub_put_element(ub_buf *b, const ub_type *t, const void *elem);
/* A DATA value: a scalar element, or "[e0, e1, ...]" for arrays.  Other
 * kinds print as OpenUSD would show them in a message: None for a block,
 * nothing for EMPTY. */
void ub_put_value(ub_buf *b, const ub_value *v);
/* A value of unknown type, as OpenUSD re-prints the text it recorded for
 * it: atoms as written (numbers with a fraction or exponent as shortest
 * doubles), strings quoted, assets between single @s, tuples and lists
 * with ", " between items.  This text is also what OpenUSD stores for it
 * (SdfUnregisteredValue). */
void ub_put_untyped(ub_buf *b, const ub_untyped *u);

#endif
