#!/bin/sh
# Build libFuzzer targets with clang and run each for a bounded time.
#   tests/fuzz/run.sh SECONDS [WORKDIR [TARGET...]]
# A target is a file tests/fuzz/fuzz_NAME.c defining LLVMFuzzerTestOneInput;
# TARGET is NAME (usdb, usda, layerstack, ...).  Without TARGETs every
# tests/fuzz/fuzz_*.c is built and run, one after another, SECONDS each.
# Every target links the whole library (runtime/, grammar/ with the scanner
# and parser generated here, compiler/, backend/), compiled once into
# WORKDIR/obj (FUZZ_JOBS compilers at a time, default 2) with
# -DUB_USDB_FUZZING (checksums are not checked: a fuzzer cannot forge them).
# Per target, in WORKDIR/NAME: the binary, corpus/ (what the fuzzer found,
# kept between runs), seeds/, and crash-* files for what failed.  A target
# uses tests/fuzz/NAME.dict as its dictionary when there is one (layerstack
# and roundtrip use usda.dict).
# Seeds (USDBAKE=path to a built usdbake, default ./usdbake, for usdb):
#   usdb        every tests/fixtures layer converted at levels 0 and 3
#   usda        the fixtures' and the corpus's .usda layers (up to 64 KiB)
#   roundtrip   the same as usda
#   layerstack  each fixture and corpus layer stack as one input: root
#               first, its other layers after "#--8<--" lines, renamed
#               l1.usda, l2.usda, ...
#   crate       the fixtures' and the corpus's crate files (up to 64 KiB)
#   pathexpr    the pathExpression values of the fixtures' and the
#               corpus's .usda layers, one a file
#   others      none (WORKDIR/NAME/corpus may hold some)
# The corpus is $UB_CONFORMANCE_DIR, default ../shared/conformance beside
# the source tree.  FUZZ_SEED=N fixes libFuzzer's random seed, so that a
# run from the same corpus mutates the same way (CI sets it: a failure
# there replays here); without it every run explores anew.
# UB_FUZZ_TEXT_READS=1 adds to crate and usdb the check that a layer read
# prints as text the usda reader reads (tests/fuzz/ub_fuzz.h; CI sets
# it).  Exits non-zero when a target fails to build or finds a crash, a
# leak or a timeout.
set -eu
secs=${1:-60}
work=${2:-${TMPDIR:-/tmp}/usdbake-fuzz}
[ $# -ge 2 ] && shift 2 || shift $#
src=$(cd "$(dirname "$0")/../.." && pwd)
usdbake=${USDBAKE:-./usdbake}
corpus=${UB_CONFORMANCE_DIR:-$src/../shared/conformance}
CLANG=${CLANG:-clang}
FLEX=${FLEX:-flex}
BISON=${BISON:-bison}
mkdir -p "$work"
work=$(cd "$work" && pwd)

targets=$*
if [ -z "$targets" ]; then
    for f in "$src"/tests/fuzz/fuzz_*.c; do
        n=${f##*/fuzz_}
        targets="$targets ${n%.c}"
    done
fi

# the scanner and parser, generated once
mkdir -p "$work/gen/grammar"
"$FLEX" --outfile="$work/gen/grammar/lexer.c" \
    --header-file="$work/gen/grammar/lexer.h" "$src/grammar/lexer.l"
"$BISON" -o "$work/gen/grammar/parser.c" \
    --defines="$work/gen/grammar/parser.h" "$src/grammar/parser.y"

# usda files under $1 (fixtures and corpus), small enough to mutate
usda_files() {
    find "$src/tests/fixtures" "$corpus" -name '*.usda' -size -64k \
        2>/dev/null | grep -v '/expected\.' | sort
}

seed_usdb() {
    if [ ! -x "$usdbake" ]; then
        echo "run.sh: no usdbake at $usdbake (set USDBAKE=): fuzz_usdb" \
            "starts from its corpus alone" >&2
        return 0
    fi
    i=0
    for f in $(find "$src/tests/fixtures" -name '*.usda' | sort); do
        for lv in 0 3; do
            "$usdbake" convert --level $lv "$f" -o "$1/s$i-$lv.usdb" \
                2>/dev/null || true
        done
        i=$((i + 1))
    done
}

seed_usda() {
    i=0
    for f in $(usda_files); do
        cp "$f" "$1/s$i.usda"
        i=$((i + 1))
    done
}

# One input per directory holding a layer stack: the root (root.usda, or
# the layer the others' names do not name) and then its neighbours, each
# renamed lN.usda in every asset path of the input.
seed_layerstack() {
    command -v python3 >/dev/null || return 0
    python3 - "$1" "$src/tests/fixtures/layerstack" \
        "$corpus/layerstack" "$corpus/clips" <<'EOF'
import os, re, sys
out, roots = sys.argv[1], sys.argv[2:]
dirs = []
for top in roots:
    for d, subdirs, files in os.walk(top):
        subdirs.sort()
        names = sorted(f for f in files
                       if f.endswith('.usda') and not f.startswith('expected.'))
        if names:
            dirs.append((d, names))
for i, (d, names) in enumerate(dirs):
    texts = {n: open(os.path.join(d, n), encoding='utf-8',
                      errors='replace').read() for n in names}
    named = {n for n in names for t in texts.values() if '@' + n + '@' in t
             or '/' + n + '@' in t}
    root = 'root.usda' if 'root.usda' in names else \
        next((n for n in names if n not in named), names[0])
    order = [root] + [n for n in names if n != root][:3]
    def rename(t):
        for k, n in enumerate(order):
            t = re.sub(r'@(\./)?' + re.escape(n) + '@', '@l%d.usda@' % k, t)
        return t
    with open(os.path.join(out, 's%d.usda' % i), 'w') as f:
        f.write('\n#--8<--\n'.join(rename(texts[n]) for n in order))
EOF
}

# crate files (by their magic) of the fixtures and the corpus, named .usdc
# or .usd, small enough to mutate
seed_crate() {
    i=0
    for f in $(find "$src/tests/fixtures" "$corpus" -type f \
        \( -name '*.usdc' -o -name '*.usd' \) -size -65k 2>/dev/null | sort)
    do
        [ "$(head -c 8 "$f")" = PXR-USDC ] || continue
        cp "$f" "$1/s$i.usdc"
        i=$((i + 1))
    done
}

# each pathExpression value of the usda layers, unquoted, as one seed
seed_pathexpr() {
    i=0
    for f in $(usda_files); do
        sed -n 's/.*pathExpression[^=]*= *"\([^"]*\)".*/\1/p' "$f"
    done | sort -u | while IFS= read -r e; do
        printf '%s' "$e" >"$1/s$i.txt"
        i=$((i + 1))
    done
}

# The library is compiled once, with the fuzzer's instrumentation, and
# each target only links against it: compiling it for every target took a
# minute a target, more than the fuzzing itself in CI.  (Paths travel as
# NUL-separated words and the object files are linked by a glob in their
# directory, so that the source tree or WORKDIR may hold spaces.)
flags="-std=c11 -g -O1 -DUB_USDB_FUZZING -D_POSIX_C_SOURCE=200809L
    -D_DEFAULT_SOURCE -fsanitize=address,undefined
    -fno-sanitize-recover=undefined"
mkdir -p "$work/obj"
rm -f "$work"/obj/*.o
echo "=== the library: building"
if printf '%s\0' "$src"/runtime/ub_*.c "$src"/grammar/ub_*.c \
    "$src"/compiler/ub_*.c "$src"/backend/ub_*.c \
    "$work/gen/grammar/lexer.c" "$work/gen/grammar/parser.c" |
    CLANG=$CLANG FLAGS=$flags SRC=$src GEN=$work/gen/grammar \
    OBJ=$work/obj xargs -0 -P "${FUZZ_JOBS:-2}" -n 1 sh -c 'o=${1##*/}
        # shellcheck disable=SC2086 # $FLAGS is a list of flags
        exec $CLANG $FLAGS -fsanitize=fuzzer-no-link -I"$SRC/runtime" \
            -I"$SRC/grammar" -I"$GEN" -I"$SRC/compiler" -I"$SRC/backend" \
            -c "$1" -o "$OBJ/${o%.c}.o"' sh
then
    :
else
    echo "run.sh: the library did not build" >&2
    exit 1
fi

status=0
for t in $targets; do
    dir=$work/$t
    mkdir -p "$dir/corpus" "$dir/seeds"
    echo "=== fuzz_$t: building"
    # shellcheck disable=SC2086 # $flags is a list of flags
    if ! (cd "$work/obj" && $CLANG $flags -fsanitize=fuzzer \
        -I"$src/runtime" -I"$src/grammar" -I"$work/gen/grammar" \
        -I"$src/compiler" -I"$src/backend" "$src/tests/fuzz/fuzz_$t.c" \
        ./*.o -lzstd -lxxhash -llz4 -lm -lpthread -o "$dir/fuzz_$t"); then
        status=1
        continue
    fi
    rm -f "$dir"/seeds/*
    dict=$t
    case $t in
    usdb) seed_usdb "$dir/seeds" ;;
    usda) seed_usda "$dir/seeds" ;;
    roundtrip) seed_usda "$dir/seeds"; dict=usda ;;
    layerstack) seed_layerstack "$dir/seeds"; dict=usda ;;
    crate) seed_crate "$dir/seeds" ;;
    pathexpr) seed_pathexpr "$dir/seeds" ;;
    esac
    dict=$src/tests/fuzz/$dict.dict
    [ -f "$dict" ] && dict=-dict=$dict || dict=
    echo "=== fuzz_$t: ${secs}s, $(ls "$dir/seeds" | wc -l) seeds"
    seed=${FUZZ_SEED:+-seed=$FUZZ_SEED}
    # shellcheck disable=SC2086 # $dict and $seed are empty or one word
    (cd "$dir" && ./fuzz_$t -max_total_time="$secs" -timeout=10 \
        -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 $dict \
        $seed corpus seeds) || status=1
done
exit $status
