#!/usr/bin/env bash
# The GPU checks, on a machine with an NVIDIA GPU, in under 8 minutes: the segment suite on the
# CUDA targets (every op against its reference, gradients, plans), then the segment, gnn and
# pairwise benches on CUDA, short criterion settings, next to `device_triad` (the device's own
# copy bandwidth). Figures go to $OUT (default gpu-results/), one log per step.
#
#   benches/gpu.sh                 # builds what it runs (cargo, --features cuda, release)
#   benches/gpu.sh target/gpu-bin  # runs prebuilt binaries: suite, segment, gnn, pairwise
#
# Building with `--features cuda` needs no GPU; on a machine without internet set DOCS_RS=1 so
# that cubecl-llvm's build script does not download its LLVM bundle (the CUDA runtime compiles
# kernels with NVRTC, which the driver provides).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-results}
mkdir -p "$OUT"
BIN=${1:-}
if [ -z "$BIN" ]; then
    BIN=target/gpu-bin
    mkdir -p "$BIN"
    for b in segment gnn pairwise; do
        exe=$(cargo bench --release --features cuda --bench "$b" --no-run --message-format=json |
            sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)
        cp "$exe" "$BIN/$b"
    done
    exe=$(cargo test --release -p burn-segment --features cuda --test suite --no-run \
        --message-format=json | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)
    cp "$exe" "$BIN/suite"
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
    if [ ! -x "$1" ]; then
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
    grep -E "^test result|FAILED|panicked|^[a-z_]+/.*|time:" "$OUT/$name.log" | tail -40 || true
}
# The CUDA targets only (the CPU targets are CI's).
BURN_GNN_CUDA_TESTS=1 BURN_GNN_ONLY_TARGETS=cuda step tests 180 "$BIN/suite" --test-threads 4
SEGMENT_BENCH_BACKEND=cuda step segment 150 "$BIN/segment" --bench \
    '^(device_triad|segment/(sum|max|softmax)/(sorted|random)/E=(1000000|10000000),D=(16|64)$|spmm/E=10000000)' \
    "${short[@]}"
GNN_BENCH_BACKEND=cuda GNN_BENCH_GRAPHS=er step gnn 150 "$BIN/gnn" --bench \
    '^(cora_epoch/|conv/[a-z_]+/E=(100000|1000000)$)' "${short[@]}"
PAIRWISE_BENCH_BACKEND=cuda step pairwise 90 "$BIN/pairwise" --bench 'attention' "${short[@]}"
echo "logs in $OUT"
