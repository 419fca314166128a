/*
 * ub_predexpr — predicate expressions read with OpenUSD's grammar and
 * written back as SdfPredicateExpression::GetText writes them.
 *
 * The grammar is a PEG; where it backtracks, the reader below decides by
 * looking ahead instead, which reads the same inputs the same way: a
 * juxtaposition is an implied "and" only when something other than ")"
 * or the end follows the blanks (nothing else could follow them), and an
 * argument is the first of float, integer, bool and string that reads.
 * Groups nest on an explicit stack, so input depth costs memory, never C
 * stack.  A call's canonical text is written as soon as it is read; the
 * tree of operators is kept to place parentheses.
 */
#include "ub_predexpr.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ub_buf.h"
#include "ub_format.h"

/* OpenUSD's SdfPredicateExpression::Op, in its order: a lower op binds
 * tighter. */
typedef enum px_op { PX_CALL, PX_NOT, PX_IMPLIED_AND, PX_AND, PX_OR } px_op;

typedef struct px_node {
    px_op op;
    uint32_t a, b; /* operands; of a call, its text at calls.data[a..b) */
} px_node;

/* Operators and operands waiting, per open group (OpenUSD's builder). */
typedef struct px_level {
    uint32_t op_base, expr_base;
} px_level;

typedef struct px {
    const char *s;
    size_t n, i;
    px_node *nodes;
    uint32_t n_nodes, cap_nodes;
    uint8_t *ops;
    uint32_t n_ops, cap_ops;
    uint32_t *exprs;
    uint32_t n_exprs, cap_exprs;
    px_level *levels;
    uint32_t n_levels, cap_levels;
    ub_buf calls; /* every call's canonical text, one after another */
    bool nomem;
} px;

static bool px_grow(px *p, void **v, uint32_t *cap, uint32_t need,
                    size_t size)
{
    if (need <= *cap)
        return true;
    uint32_t c = *cap ? *cap : 16;
    while (c < need) {
        if (c > UINT32_MAX / 2) {
            p->nomem = true;
            return false;
        }
        c *= 2;
    }
    void *nv = realloc(*v, (size_t)c * size);
    if (!nv) {
        p->nomem = true;
        return false;
    }
    *v = nv;
    *cap = c;
    return true;
}

static char px_c(const px *p, size_t i)
{
    return i < p->n ? p->s[i] : '\0';
}

static bool px_blank(char c)
{
    return c == ' ' || c == '\t';
}

static size_t px_skip_blanks(const px *p, size_t i)
{
    while (px_blank(px_c(p, i)))
        i++;
    return i;
}

static bool px_ident_first(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool px_ident_other(char c)
{
    return px_ident_first(c) || (c >= '0' && c <= '9');
}

static bool px_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* PEGTL's keyword: the word, not followed by an identifier character. */
static bool px_keyword(const px *p, size_t i, const char *w)
{
    size_t n = strlen(w);
    return i + n <= p->n && memcmp(p->s + i, w, n) == 0 &&
           !px_ident_other(px_c(p, i + n));
}

/* The length of the identifier at i (0: none). */
static size_t px_ident(const px *p, size_t i)
{
    if (!px_ident_first(px_c(p, i)))
        return 0;
    size_t j = i + 1;
    while (px_ident_other(px_c(p, j)))
        j++;
    return j - i;
}

/* A function or keyword-argument name: an identifier that is not one of
 * the grammar's reserved words. */
static size_t px_name(const px *p, size_t i)
{
    static const char *const reserved[] = {"not", "and",  "or",
                                           "inf", "true", "false"};
    size_t len = px_ident(p, i);
    for (size_t k = 0; len && k < sizeof reserved / sizeof *reserved; k++)
        if (strlen(reserved[k]) == len && memcmp(p->s + i, reserved[k], len) == 0)
            return 0;
    return len;
}

static bool px_push_node(px *p, px_node x)
{
    if (!px_grow(p, (void **)&p->nodes, &p->cap_nodes, p->n_nodes + 1,
                 sizeof *p->nodes) ||
        !px_grow(p, (void **)&p->exprs, &p->cap_exprs, p->n_exprs + 1,
                 sizeof *p->exprs))
        return false;
    p->nodes[p->n_nodes] = x;
    p->exprs[p->n_exprs++] = p->n_nodes++;
    return true;
}

/* Combine the innermost waiting operator with its operands. */
static bool px_reduce(px *p)
{
    px_op op = (px_op)p->ops[--p->n_ops];
    uint32_t right = p->exprs[--p->n_exprs];
    if (op == PX_NOT)
        return px_push_node(p, (px_node){PX_NOT, right, 0});
    uint32_t left = p->exprs[--p->n_exprs];
    return px_push_node(p, (px_node){op, left, right});
}

/* OpenUSD's PushOp: first reduce what binds at least as tightly (binary
 * operators associate to the left; "not" stacks). */
static bool px_push_op(px *p, px_op op)
{
    const px_level *l = &p->levels[p->n_levels - 1];
    while (p->n_ops > l->op_base) {
        px_op top = (px_op)p->ops[p->n_ops - 1];
        if (!(top < op || (top == op && top != PX_NOT)))
            break;
        if (!px_reduce(p))
            return false;
    }
    if (!px_grow(p, (void **)&p->ops, &p->cap_ops, p->n_ops + 1, 1))
        return false;
    p->ops[p->n_ops++] = (uint8_t)op;
    return true;
}

static bool px_open(px *p)
{
    if (!px_grow(p, (void **)&p->levels, &p->cap_levels, p->n_levels + 1,
                 sizeof *p->levels))
        return false;
    p->levels[p->n_levels++] = (px_level){p->n_ops, p->n_exprs};
    return true;
}

/* Reduce the innermost group to one expression, left on the stack of the
 * group around it.  False when it holds none (an empty group). */
static bool px_close(px *p)
{
    const px_level *l = &p->levels[p->n_levels - 1];
    while (p->n_ops > l->op_base)
        if (!px_reduce(p))
            return false;
    if (p->n_exprs != l->expr_base + 1)
        return false;
    p->n_levels--;
    return true;
}

/* ---- arguments ---------------------------------------------------------- */

typedef enum px_arg_status { PX_ARG_OK, PX_ARG_NONE, PX_ARG_ERROR } px_arg_status;

/* PredArgFloat and PredArgInt at *i: the number written to out.
 * PX_ARG_NONE when neither reads (an integer out of int64's range does
 * not: it is then read as a string); PX_ARG_ERROR where the grammar
 * insists ("1." or "1e" must go on with digits). */
static px_arg_status px_number(px *p, size_t *i, ub_buf *out)
{
    size_t j = *i;
    if (px_c(p, j) == '-')
        j++;
    if (px_keyword(p, j, "inf")) {
        ub_put_double(out, j > *i ? -INFINITY : INFINITY);
        *i = j + 3;
        return PX_ARG_OK;
    }
    if (!px_digit(px_c(p, j)))
        return PX_ARG_NONE;
    while (px_digit(px_c(p, j)))
        j++;
    bool is_float = false;
    if (px_c(p, j) == '.') {
        if (!px_digit(px_c(p, ++j)))
            return PX_ARG_ERROR;
        while (px_digit(px_c(p, j)))
            j++;
        is_float = true;
    }
    if (px_c(p, j) == 'e' || px_c(p, j) == 'E') {
        j++;
        if (px_c(p, j) == '-' || px_c(p, j) == '+')
            j++;
        if (!px_digit(px_c(p, j)))
            return PX_ARG_ERROR;
        while (px_digit(px_c(p, j)))
            j++;
        is_float = true;
    }
    char small[64];
    size_t len = j - *i;
    char *num = len < sizeof small ? small : malloc(len + 1);
    if (!num) {
        p->nomem = true;
        return PX_ARG_ERROR;
    }
    memcpy(num, p->s + *i, len);
    num[len] = '\0';
    px_arg_status st = PX_ARG_OK;
    if (is_float) {
        ub_put_double(out, strtod(num, NULL)); /* out of range: +-inf */
    } else {
        errno = 0;
        long long v = strtoll(num, NULL, 10);
        if (errno == ERANGE)
            st = PX_ARG_NONE;
        else
            ub_put_i64(out, (int64_t)v);
    }
    if (num != small)
        free(num);
    if (st == PX_ARG_OK)
        *i = j;
    return st;
}

/* UnquotedStringChar */
static bool px_unquoted(char c)
{
    return px_ident_other(c) || (c && strchr("~!@#$%^&*-+=|\\.?/", c));
}

/* PredArgVal at *i, its canonical text appended to out.  A string may be
 * empty, so something always reads unless the grammar insists. */
static bool px_arg(px *p, size_t *i, ub_buf *out)
{
    px_arg_status st = px_number(p, i, out);
    if (st != PX_ARG_NONE)
        return st == PX_ARG_OK;
    if (px_keyword(p, *i, "true") || px_keyword(p, *i, "false")) {
        bool t = p->s[*i] == 't';
        ub_buf_putc(out, t ? '1' : '0'); /* a VtValue bool streams as 1/0 */
        *i += t ? 4 : 5;
        return true;
    }
    size_t start = *i, body = start, end;
    char q = px_c(p, start);
    if (q == '"' || q == '\'') {
        /* escapes only of the quote, '\\' and b f n r t; no control
         * characters */
        size_t j = ++body;
        for (;;) {
            char c = px_c(p, j);
            if (j >= p->n || (unsigned char)c < 0x20)
                return false;
            if (c == q)
                break;
            if (c == '\\') {
                char e = px_c(p, j + 1);
                if (e != q && !(e && strchr("\\bfnrt", e)))
                    return false;
                j++;
            }
            j++;
        }
        end = j;
        *i = j + 1;
    } else {
        size_t j = start;
        while (px_unquoted(px_c(p, j)))
            j++;
        end = j;
        *i = j;
    }
    /* both kinds are evaluated for escapes, as OpenUSD does */
    size_t len = end - body;
    char *v = malloc(len + 1);
    if (!v) {
        p->nomem = true;
        return false;
    }
    size_t vn = ub_unescape(v, p->s + body, len);
    ub_put_quoted(out, v, vn);
    free(v);
    return true;
}

/* ---- calls -------------------------------------------------------------- */

/* PredParenArgs: positional arguments, then keyword ones ("k = v"). */
static bool px_paren_args(px *p, size_t *i, ub_buf *out)
{
    bool first = true, keywords = false;
    size_t j = *i;
    for (;;) {
        size_t k = j;
        size_t kw = px_name(p, k);
        size_t eq = px_skip_blanks(p, k + kw);
        bool is_kw = kw && px_c(p, eq) == '=';
        if (keywords && !is_kw) {
            /* a positional argument after a keyword one: this comma is
             * not part of the arguments */
            break;
        }
        if (!first)
            ub_buf_puts(out, ", ");
        if (is_kw) {
            keywords = true;
            ub_buf_append(out, p->s + k, kw);
            ub_buf_putc(out, '=');
            k = px_skip_blanks(p, eq + 1);
        }
        if (!px_arg(p, &k, out))
            return false;
        j = k;
        first = false;
        size_t c = px_skip_blanks(p, j);
        if (px_c(p, c) != ',')
            break;
        size_t next = px_skip_blanks(p, c + 1);
        if (keywords) {
            size_t nk = px_name(p, next);
            if (!nk || px_c(p, px_skip_blanks(p, next + nk)) != '=')
                break;
        }
        j = next;
    }
    *i = j;
    return true;
}

/* A call at *i (a name known to be there), its text added as an operand. */
static bool px_call(px *p, size_t *i, size_t name_len)
{
    size_t start = p->calls.len;
    size_t j = *i + name_len;
    ub_buf_append(&p->calls, p->s + *i, name_len);
    if (px_c(p, j) == ':') {
        ub_buf_putc(&p->calls, ':');
        j++;
        for (;;) {
            if (!px_arg(p, &j, &p->calls))
                return false;
            if (px_c(p, j) != ',')
                break;
            ub_buf_putc(&p->calls, ',');
            j++;
        }
    } else {
        size_t k = px_skip_blanks(p, j);
        if (px_c(p, k) == '(') {
            ub_buf_putc(&p->calls, '(');
            k = px_skip_blanks(p, k + 1);
            if (!px_paren_args(p, &k, &p->calls))
                return false;
            k = px_skip_blanks(p, k);
            if (px_c(p, k) != ')')
                return false;
            ub_buf_putc(&p->calls, ')');
            j = k + 1;
        }
    }
    if (p->calls.failed) {
        p->nomem = true;
        return false;
    }
    *i = j;
    return px_push_node(p, (px_node){PX_CALL, (uint32_t)start,
                                     (uint32_t)p->calls.len});
}

/* ---- expressions -------------------------------------------------------- */

static bool px_parse(px *p)
{
    if (!px_open(p))
        return false;
    size_t i = px_skip_blanks(p, 0);
    for (;;) {
        /* a factor: "not"s, then a call or a group */
        if (px_keyword(p, i, "not")) {
            for (;;) {
                if (!px_push_op(p, PX_NOT))
                    return false;
                i += 3;
                size_t k = px_skip_blanks(p, i);
                if (k == i || !px_keyword(p, k, "not"))
                    break;
                i = k;
            }
            i = px_skip_blanks(p, i);
        }
        if (px_c(p, i) == '(') {
            if (!px_open(p))
                return false;
            i = px_skip_blanks(p, i + 1);
            continue;
        }
        size_t name = px_name(p, i);
        if (!name || !px_call(p, &i, name))
            return false;
        /* then an operator, or the end of groups and of the whole */
        for (;;) {
            size_t k = px_skip_blanks(p, i);
            px_op op = PX_CALL;
            if (px_keyword(p, k, "and")) {
                op = PX_AND;
                k += 3;
            } else if (px_keyword(p, k, "or")) {
                op = PX_OR;
                k += 2;
            } else if (k > i && k < p->n && p->s[k] != ')') {
                op = PX_IMPLIED_AND;
            }
            if (op != PX_CALL) {
                if (!px_push_op(p, op))
                    return false;
                i = op == PX_IMPLIED_AND ? k : px_skip_blanks(p, k);
                break;
            }
            if (k < p->n && p->s[k] == ')' && p->n_levels > 1) {
                if (!px_close(p))
                    return false;
                i = k + 1;
                continue;
            }
            return k == p->n && p->n_levels == 1 && px_close(p);
        }
    }
}

/* GetText: OpenUSD's walk, on a stack of its own.  An operator is
 * parenthesised when its parent binds tighter, or is the same operator
 * and this is its right operand. */
static void px_print(const px *p, uint32_t root, ub_buf *out, bool *nomem)
{
    typedef struct frame {
        uint32_t node;
        int arg; /* operands done */
        bool paren;
    } frame;
    frame *st = NULL;
    uint32_t n = 0, cap = 0;
    px q = {0};
    if (!px_grow(&q, (void **)&st, &cap, 1, sizeof *st)) {
        *nomem = true;
        return;
    }
    st[n++] = (frame){root, 0, false};
    while (n && !out->failed) {
        frame *f = &st[n - 1];
        const px_node *x = &p->nodes[f->node];
        if (x->op == PX_CALL) {
            ub_buf_append(out, p->calls.data + x->a, x->b - x->a);
            n--;
            continue;
        }
        int arity = x->op == PX_NOT ? 1 : 2;
        if (f->arg == 0 && f->paren)
            ub_buf_putc(out, '(');
        if (f->arg == (x->op == PX_NOT ? 0 : 1))
            ub_buf_puts(out, x->op == PX_NOT        ? "not "
                             : x->op == PX_IMPLIED_AND ? " "
                             : x->op == PX_AND         ? " and "
                                                       : " or ");
        if (f->arg == arity) {
            if (f->paren)
                ub_buf_putc(out, ')');
            n--;
            continue;
        }
        int which = ++f->arg; /* 1: the first operand, 2: the second */
        uint32_t child = which == 1 ? x->a : x->b;
        const px_node *c = &p->nodes[child];
        bool paren = c->op != PX_CALL &&
                     (x->op < c->op || (x->op == c->op && which == 2));
        if (!px_grow(&q, (void **)&st, &cap, n + 1, sizeof *st)) {
            *nomem = true;
            break;
        }
        st[n++] = (frame){child, 0, paren};
    }
    free(st);
}

ub_pathexpr_status ub_predexpr_canon(const char *text, size_t n, char **out)
{
    px p = {.s = text, .n = n};
    ub_buf_init(&p.calls);
    *out = NULL;
    bool ok = px_parse(&p);
    ub_buf o;
    ub_buf_init(&o);
    bool nomem = p.nomem;
    if (ok && !nomem) {
        px_print(&p, p.exprs[0], &o, &nomem);
        ub_buf_putc(&o, '\0');
        nomem |= o.failed;
    }
    free(p.nodes);
    free(p.ops);
    free(p.exprs);
    free(p.levels);
    ub_buf_free(&p.calls);
    if (nomem) {
        ub_buf_free(&o);
        return UB_PATHEXPR_NOMEM;
    }
    if (!ok) {
        ub_buf_free(&o);
        return UB_PATHEXPR_SYNTAX;
    }
    *out = ub_buf_take(&o);
    return *out ? UB_PATHEXPR_OK : UB_PATHEXPR_NOMEM;
}
