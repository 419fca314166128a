#!/bin/sh
# Judge usdbake's crate (.usdc) output by OpenUSD itself: for every good
# layer of the conformance corpus (roots of runs whose `cat` is ok, and
# every expected.*.usda) and of tests/fixtures, `usdcat` of usdbake's
# .usdc must print exactly
# what `usdcat` of the layer prints.  Also totals the sizes of usdbake's
# .usdc files and of the ones `usdcat in -o out.usdc` writes, and counts
# the layers where usdbake's is the larger.
#
# Local only (CI has no OpenUSD):
#   USDCAT=/path/to/usdcat tests/usdc-oracle.sh [USDBAKE] [CORPUS]
# USDBAKE defaults to ./usdbake (run it from the build directory), CORPUS
# to $UB_CONFORMANCE_DIR or ../shared/conformance beside the sources.
# Prints one line per difference and a summary; exits 1 when any layer
# differs or fails to write.
set -u
: "${USDCAT:?set USDCAT to the usdcat of OpenUSD}"
usdbake=${1:-./usdbake}
corpus=${2:-${UB_CONFORMANCE_DIR:-$(dirname "$0")/../../shared/conformance}}
[ -d "$corpus" ] || { echo "usdc-oracle: no corpus at $corpus" >&2; exit 2; }
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM

# ucat OUT ARGS...: usdcat ARGS with its output in OUT, tried again when
# it aborts (exit 134): the prebuilt OpenUSD 24.08 sometimes dies on the
# way out ("pure virtual method called"), in about 1 run of 150 whatever
# the input, which would count as a difference.  Each try rewrites OUT.
ucat() {
    out=$1
    shift
    for _ in 1 2 3 4 5; do
        "$USDCAT" "$@" > "$out" 2>> "$tmp/ucat.err"
        rc=$?
        [ "$rc" = 134 ] || return "$rc"
    done
    return "$rc"
}

# The inputs, one a line.
{
    for c in "$corpus"/*/*/CASE; do
        d=$(dirname "$c")
        grep -q '^cat: ok' "$c" || continue
        root=$(sed -n 's/^root: //p' "$c")
        [ -n "$root" ] && echo "$d/$root"
    done
    find "$corpus" -name 'expected.*.usda' | sort
    find "$(dirname "$0")/fixtures" -name '*.usda' | sort
} > "$tmp/inputs"

n=0 same=0 diff=0 model=0 refused=0 unread=0 oracle_fail=0 mine_total=0 ref_total=0
larger=0 larger_by=0
while IFS= read -r in; do
    n=$((n + 1))
    if ! ucat "$tmp/ref.txt" "$in"; then
        oracle_fail=$((oracle_fail + 1))
        continue
    fi
    if ! "$usdbake" cat "$in" > /dev/null 2>&1; then
        unread=$((unread + 1)) # usdbake cannot read this input at all
        continue
    fi
    rm -f "$tmp/mine.usdc" "$tmp/ref.usdc"
    if ! "$usdbake" convert "$in" -o "$tmp/mine.usdc" 2> "$tmp/err"; then
        refused=$((refused + 1))
        echo "REFUSED $in: $(head -n 1 "$tmp/err")"
        continue
    fi
    if ucat "$tmp/mine.txt" "$tmp/mine.usdc" &&
        cmp -s "$tmp/ref.txt" "$tmp/mine.txt"; then
        same=$((same + 1))
    elif "$usdbake" cat "$in" 2>/dev/null | cmp -s "$tmp/ref.txt" -; then
        diff=$((diff + 1))
        echo "DIFFERS $in"
        [ -n "${VERBOSE:-}" ] && diff "$tmp/ref.txt" "$tmp/mine.txt" | head -n 20
    else
        # usdbake's own reading of the input already differs from
        # OpenUSD's (a reader matter, not the writer's)
        model=$((model + 1))
        echo "READ-DIFFERS $in"
    fi
    if ucat /dev/null "$in" -o "$tmp/ref.usdc"; then
        mine=$(wc -c < "$tmp/mine.usdc")
        ref=$(wc -c < "$tmp/ref.usdc")
        mine_total=$((mine_total + mine))
        ref_total=$((ref_total + ref))
        if [ "$mine" -gt "$ref" ]; then
            larger=$((larger + 1))
            larger_by=$((larger_by + mine - ref))
            [ -n "${VERBOSE:-}" ] && echo "LARGER by $((mine - ref)) $in"
        fi
    fi
done < "$tmp/inputs"

# usdbake's own flattening written straight to crate (composed layers the
# text reader never builds): usdcat of `flatten -o x.usdc` must print what
# usdcat of `flatten -o x.usda` prints -- or, where text cannot carry what
# crate does (a list op left empty by `reorder` alone prints as an empty
# `( )`, which reads back as nothing), what usdcat prints of OpenUSD's own
# flattening to crate.
fn=0 fsame=0 fsame_ref=0 frefused=0
for c in "$corpus"/*/*/CASE; do
    d=$(dirname "$c")
    root=$(sed -n 's/^root: //p' "$c")
    for mode in "" --layer-stack; do
        ref_flag=--flatten # OpenUSD's usdcat flag for the same flattening
        [ -n "$mode" ] && ref_flag=--flattenLayerStack
        "$usdbake" flatten $mode "$d/$root" -o "$tmp/f.usda" 2>/dev/null ||
            continue
        fn=$((fn + 1))
        if ! "$usdbake" flatten $mode "$d/$root" -o "$tmp/f.usdc" \
            2> "$tmp/err"; then
            # what crate cannot hold (OpenUSD refuses to write it too)
            frefused=$((frefused + 1))
            echo "REFUSED flatten $mode $d/$root: $(grep -m1 'cannot be written' "$tmp/err")"
            continue
        fi
        rm -f "$tmp/a.txt" "$tmp/b.txt" "$tmp/r.usdc"
        ucat "$tmp/a.txt" "$tmp/f.usda"
        a_ok=$?
        if ! ucat "$tmp/b.txt" "$tmp/f.usdc"; then
            diff=$((diff + 1))
            echo "DIFFERS flatten $mode $d/$root (usdcat cannot read the usdc)"
        elif [ "$a_ok" = 0 ] && cmp -s "$tmp/a.txt" "$tmp/b.txt"; then
            fsame=$((fsame + 1))
        elif ucat "$tmp/r.txt" "$ref_flag" "$d/$root" -o "$tmp/r.usdc" &&
            ucat "$tmp/r.txt" "$tmp/r.usdc" &&
            cmp -s "$tmp/r.txt" "$tmp/b.txt"; then
            fsame_ref=$((fsame_ref + 1))
            echo "AS-OPENUSD-CRATE flatten $mode $d/$root"
        else
            diff=$((diff + 1))
            echo "DIFFERS flatten $mode $d/$root"
        fi
    done
done

echo "usdc-oracle: $n layers: $same identical through usdcat, $diff differ," \
     "$model differ because usdbake reads the input differently already," \
     "$refused refused by the writer, $unread not readable by usdbake," \
     "$oracle_fail not readable by usdcat"
echo "usdc-oracle: flatten: $fsame of $fn flattened stages identical through" \
     "usdcat as usdc and as usda, $fsame_ref more as OpenUSD's own" \
     "flattening to usdc, $frefused refused by the writer"
echo "usdc-oracle: sizes: usdbake $mine_total bytes, OpenUSD $ref_total bytes" \
     "(the $((same + diff + model)) layers both wrote); usdbake's is larger" \
     "for $larger of them, by $larger_by bytes in all (VERBOSE=1 names them)"
[ "$diff" -eq 0 ] && [ "$refused" -eq 0 ]
