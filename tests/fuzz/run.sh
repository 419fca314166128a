#!/bin/sh
# Build a reader fuzzer with clang and run it for a bounded time.
#   tests/fuzz/run.sh SECONDS [WORKDIR] [TARGET]
# TARGET is usdb (the .usdb reader, the default) or crate (the usdc
# reader).  Seeds: usdb, every tests/fixtures layer converted at levels 0
# and 3 (needs a built usdbake; set USDBAKE=path, default ./usdbake);
# crate, every crate file of tests/fixtures and of the conformance corpus
# (UB_CONFORMANCE_DIR, or ../shared/conformance next to the source tree).
set -eu
secs=${1:-60}
target=${3:-usdb}
work=${2:-${TMPDIR:-/tmp}/usdbake-fuzz}/$target
src=$(cd "$(dirname "$0")/../.." && pwd)
usdbake=${USDBAKE:-./usdbake}
CLANG=${CLANG:-clang}
mkdir -p "$work/corpus" "$work/seeds"
runtime="$src/runtime/ub_arena.c $src/runtime/ub_intern.c
    $src/runtime/ub_diag.c $src/runtime/ub_value.c $src/runtime/ub_layer.c
    $src/runtime/ub_buf.c"
cc() {
    # shellcheck disable=SC2086
    $CLANG -std=c11 -g -O1 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE \
        -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
        -I"$src/runtime" -I"$src/backend" "$@" $runtime -lm
}
case $target in
usdb)
    cc -DUB_USDB_FUZZING "$src/tests/fuzz/fuzz_usdb.c" \
        "$src/backend/ub_usdb_write.c" "$src/runtime/ub_usdb_read.c" \
        "$src/runtime/ub_usdb_interp.c" -lzstd -lxxhash \
        -o "$work/fuzz_usdb"
    i=0
    for f in $(find "$src/tests/fixtures" -name '*.usda' | sort); do
        for lv in 0 3; do
            "$usdbake" convert --level $lv "$f" -o "$work/seeds/s$i-$lv.usdb" \
                2>/dev/null || true
        done
        i=$((i + 1))
    done
    ;;
crate)
    cc "$src/tests/fuzz/fuzz_crate.c" "$src/backend/ub_usda.c" \
        "$src/runtime/ub_format.c" "$src/runtime/ub_crate_read.c" \
        "$src/runtime/ub_crate_codec.c" -llz4 -o "$work/fuzz_crate"
    corpus=${UB_CONFORMANCE_DIR:-$src/../shared/conformance}
    i=0
    for f in $(find "$src/tests/fixtures" "$corpus/crate" -type f \
                   \( -name '*.usdc' -o -name '*.usd' \) 2>/dev/null | sort); do
        # only crate files, and small ones (max_len below)
        if [ "$(head -c 8 "$f")" = PXR-USDC ] &&
           [ "$(wc -c <"$f")" -le 65536 ]; then
            cp "$f" "$work/seeds/s$i.usdc"
            i=$((i + 1))
        fi
    done
    ;;
*)
    echo "run.sh: unknown target '$target' (usdb or crate)" >&2
    exit 2
    ;;
esac
cd "$work"
"./fuzz_$target" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 corpus seeds
