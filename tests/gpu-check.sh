#!/usr/bin/env bash
# The real-GPU check, in one go: build gpudoctor (release), run `check`, `devices` and
# `smoke` (also with the NCCL all-reduce) on this machine's GPUs, and save the JSON, the human
# output and the timings (peers.txt: the smoke test's copy between every ordered GPU pair;
# copies.txt: each GPU's host and device-local copy figures; preflight.json: the gate's run).
#
#   tests/gpu-check.sh [OUTDIR]        (default: $OUT, else ./gpu-check-out)
#
# GPUDOCTOR_BIN=PATH uses that binary instead of building; GPUDOCTOR_EXTRA_ARGS adds
# arguments to every gpudoctor call, GPUDOCTOR_NO_HYPERFINE=1 skips the hyperfine pass
# (tests/it/smoke.rs runs this script against the fakes).
# Commit OUTDIR's JSON under tests/fixtures/gpu/ and put the figures in docs/performance.md.
set -u
out=${1:-${OUT:-gpu-check-out}}
mkdir -p "$out"
cd "$(dirname "$0")/.."

if [ -n "${GPUDOCTOR_BIN:-}" ]; then
    bin=$GPUDOCTOR_BIN
else
    cargo build --release --locked >"$out/build.log" 2>&1 || { tail -20 "$out/build.log"; exit 1; }
    bin=target/release/gpudoctor
fi
# shellcheck disable=SC2206  # word splitting of the extra arguments is intended
extra=(${GPUDOCTOR_EXTRA_ARGS:-})

{
    echo "date: $(date -u +%FT%TZ)"
    echo "host: $(uname -a)"
    echo "cpus: $(nproc)"
    echo "gpudoctor: $("$bin" --version)"
    command -v nvidia-smi >/dev/null && nvidia-smi
} >"$out/system.txt" 2>&1

: >"$out/timings.txt"
# run NAME ARGS...: saves NAME.json / NAME.txt and one timings line (wall seconds, exit code).
run() {
    local name=$1
    shift
    local t0 t1 rc
    t0=$(date +%s.%N)
    "$bin" "$@" "${extra[@]}" >"$out/$name.out" 2>"$out/$name.err"
    rc=$?
    t1=$(date +%s.%N)
    printf '%-14s rc=%s wall_s=%s  gpudoctor %s\n' "$name" "$rc" \
        "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')" "$*" >>"$out/timings.txt"
}

run check-quick check --json --quick
run check check --json
run devices devices --json
run smoke smoke --json
run smoke-gpu0 smoke --json --device 0
# NCCL all-reduce over every GPU (the libnccl torch would load; GPUDOCTOR_NCCL_LIB names another).
run smoke-nccl smoke --json --nccl
run smoke-human smoke --color never
run check-human check --color never
# The scheduler's gate, timed against its own 15 s budget (snapshot.preflight in the JSON).
run preflight check --json --preflight
for f in "$out"/*.out; do
    case $f in
        *-human.out) mv "$f" "${f%.out}.txt" ;;
        *) mv "$f" "${f%.out}.json" ;;
    esac
done

# The peer step's figures from smoke.json, one line per ordered GPU pair (python3 or jq).
peer_lines() {
    if command -v python3 >/dev/null; then
        python3 - "$out/smoke.json" <<'PY'
import json, sys
run = (json.load(open(sys.argv[1])).get("result") or {}).get("run") or {}
for p in run.get("peers", []):
    def step(s):
        if s is None:
            return "-"
        k, v = next(iter(s.items()))
        return v["error"]["name"] if k == "failed" else (k if k == "skipped" else v)
    c = p.get("copy") or {}
    ok = c.get("ok")
    figure = f"{ok['gbps']:.1f} GB/s of {ok['bytes'] >> 20} MiB verified={ok['verified']}" if ok else step(p.get("copy"))
    print(f"{p['from']}->{p['to']} {p.get('from_bus_id')}->{p.get('to_bus_id')} "
          f"can_access={step(p.get('can_access'))} enable={'ok' if (p.get('enable') or {}).get('ok') else step(p.get('enable'))} "
          f"copy={figure} finished={p['finished']}")
PY
    elif command -v jq >/dev/null; then
        jq -r '.result.run.peers[]? | "\(.from)->\(.to) \(.from_bus_id)->\(.to_bus_id) can_access=\(.can_access) copy=\(.copy) finished=\(.finished)"' "$out/smoke.json"
    else
        echo "neither python3 nor jq: read result.run.peers in smoke.json"
    fi
}
peer_lines >"$out/peers.txt" 2>&1

# Each GPU's copy figures from smoke.json: pinned host→GPU and GPU→host, and device-local
# (cuMemcpyDtoD, bytes read plus written), the figures docs/smoke.md states per machine.
copy_lines() {
    if command -v python3 >/dev/null; then
        python3 - "$out/smoke.json" <<'PY'
import json, sys
run = (json.load(open(sys.argv[1])).get("result") or {}).get("run") or {}
for d in run.get("devices", []):
    name = (d.get("info") or {}).get("name", "?")
    t = (d.get("transfer") or {}).get("ok") or {}
    print("%s %s: bytes=%s h2d=%s d2h=%s device_local=%s GB/s" % (
        d.get("ordinal"), name, t.get("bytes"), t.get("pinned_h2d_gbps"),
        t.get("pinned_d2h_gbps"), t.get("device_gbps")))
PY
    elif command -v jq >/dev/null; then
        jq -r '.result.run.devices[]? | "\(.ordinal) \(.info.name): bytes=\(.transfer.ok.bytes) h2d=\(.transfer.ok.pinned_h2d_gbps) d2h=\(.transfer.ok.pinned_d2h_gbps) device_local=\(.transfer.ok.device_gbps) GB/s"' "$out/smoke.json"
    else
        echo "neither python3 nor jq: read result.run.devices[].transfer in smoke.json"
    fi
}
copy_lines >"$out/copies.txt" 2>&1

# The static check's own cost next to the smoke test's, when hyperfine is there.
if command -v hyperfine >/dev/null && [ -z "${GPUDOCTOR_NO_HYPERFINE:-}" ]; then
    hyperfine -N --warmup 3 --runs 20 --export-json "$out/hyperfine.json" \
        "$bin check --quick ${extra[*]}" "$bin smoke ${extra[*]}" >"$out/hyperfine.txt" 2>&1
fi

cat "$out/timings.txt"
cat "$out/copies.txt"
echo "peer copies ($(wc -l <"$out/peers.txt") pairs): $out/peers.txt"
echo "saved in $out"
