#!/usr/bin/env bash
# The GPU checks, on a machine with an NVIDIA GPU, in under 8 minutes: the segment suite on the
# CUDA targets (every op against its reference, gradients, plans), then the segment, gnn and
# pairwise benches on CUDA, short criterion settings, next to `device_triad` (the device's own
# copy bandwidth), then the peers on the same cells where python3 has them (torch / PyG, JAX:
# benches/peers/gpu_peers.py). Figures go to $OUT (default gpu-results/), one log per step.
#
#   benches/gpu.sh                 # builds what it runs (cargo, --features cuda, release)
#   benches/gpu.sh target/gpu-bin  # runs prebuilt binaries: suite, segment, gnn, pairwise
#
# Building with `--features cuda` needs no GPU or CUDA toolkit. The binaries are large (100-160
# MB; 17-21 MB each with `strip` and `xz`); a directory of `*.xz` is unpacked first. A 64 MiB
# transfer takes three of them beside the tree (suite, segment, gnn; a missing one is skipped),
# and the logs and CSVs are nine files: tar $OUT where fewer files may come back.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-results}
mkdir -p "$OUT"
BIN=${1:-}
if [ -z "$BIN" ]; then
    # DOCS_RS: cubecl-llvm's build script would download an LLVM bundle (no network here). Its
    # LLVM symbols are then missing at link time: a first link leaves them unresolved, and
    # stubs that abort (the CUDA runtime compiles with NVRTC and never calls them) replace them.
    export DOCS_RS=1
    exe() { sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1; }
    BIN=target/gpu-bin
    mkdir -p "$BIN"
    probe=$(cargo rustc --release --features cuda --bench pairwise --message-format=json -- \
        -C link-arg=-Wl,--unresolved-symbols=ignore-all | exe)
    {
        echo '#include <stdio.h>'
        echo '#include <stdlib.h>'
        echo 'static void missing(const char *f) { fprintf(stderr, "no LLVM in this build: %s\n", f); abort(); }'
        # (the last two are referenced only once the others resolve)
        { nm -D --undefined-only "$probe" | awk '{print $2}' | grep -E '^(LLVM|cubecl_)'
          printf '%s\n' cubecl_link_device_bitcode cubecl_free_message; } | sort -u |
            sed 's/.*/void &(void) { missing("&"); }/'
    } >"$BIN/llvm_stub.c"
    cc -O1 -fPIC -c "$BIN/llvm_stub.c" -o "$BIN/llvm_stub.o"
    ar rcs "$BIN/libllvm_stub.a" "$BIN/llvm_stub.o"
    link=(-C "link-arg=$PWD/$BIN/libllvm_stub.a")
    for b in segment gnn pairwise; do
        cp "$(cargo rustc --release --features cuda --bench "$b" --message-format=json -- "${link[@]}" | exe)" "$BIN/$b"
    done
    cp "$(cargo rustc --release --features cuda -p burn-segment --test suite --message-format=json -- "${link[@]}" | exe)" "$BIN/suite"
fi
# Prebuilt binaries may come compressed (xz), to fit a transfer limit.
for f in "$BIN"/*.xz; do
    [ -e "$f" ] || continue
    xz -d -f "$f" 2>/dev/null || python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f"
    chmod +x "${f%.xz}"
done
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv | tee "$OUT/gpu.txt"
short=(--warm-up-time 0.3 --measurement-time 1 --sample-size 10)
step() { # name, timeout in seconds, command... (skipped when its binary is missing)
    local name=$1 limit=$2
    shift 2
    if ! command -v "$1" >/dev/null; then
        echo "== $name: no $1, skipped"
        return
    fi
    echo "== $name"
    local start=$SECONDS
    set +e
    timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
    local rc=$?
    set -e
    echo "   exit $rc, $((SECONDS - start)) s"
    grep -E "^test result|FAILED|panicked|^[a-z_]+/.*|time:|^(torch|jax) " "$OUT/$name.log" | tail -80 || true
}
# The CUDA targets only (the CPU targets are CI's).
BURN_GNN_CUDA_TESTS=1 BURN_GNN_ONLY_TARGETS=cuda step tests 150 "$BIN/suite" --test-threads 12
# i32 ids, the CubeCL backends' default Int dtype (JAX's too).
SEGMENT_BENCH_BACKEND=cuda SEGMENT_BENCH_IDS=i32 step segment 110 "$BIN/segment" --bench \
    '^(device_triad|segment/(sum|max|max_values|softmax)/(sorted|random)/E=(1000000|10000000),D=(16|64)$|spmm/E=10000000)' \
    "${short[@]}"
GNN_BENCH_BACKEND=cuda GNN_BENCH_IDS=i32 GNN_BENCH_GRAPHS=er GNN_BENCH_MAX_E=1000000 step gnn 90 \
    "$BIN/gnn" --bench '^(cora_epoch/|conv/(gcn|gat|sage)/E=(100000|1000000)$)' "${short[@]}"
PAIRWISE_BENCH_BACKEND=cuda step pairwise 45 "$BIN/pairwise" --bench 'attention' "${short[@]}"
if python3 -c 'import torch_geometric' 2>/dev/null; then
    step peers_torch 60 python3 benches/peers/gpu_peers.py torch "$OUT/peers_torch.csv"
fi
if python3 -c 'import jax' 2>/dev/null; then
    step peers_jax 60 python3 benches/peers/gpu_peers.py jax "$OUT/peers_jax.csv"
fi
echo "logs in $OUT"
