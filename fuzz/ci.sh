#!/usr/bin/env bash
# Runs every fuzz target for a short fixed time and fails on any crash, hang or abort
# (.ci/run calls it; docs/testing.md "Fuzzing" says how to run the targets longer).
#
#   fuzz/ci.sh [SECONDS_PER_TARGET]        (default 15, or $GPUDOCTOR_FUZZ_SECONDS)
#
# With a nightly toolchain it runs libFuzzer through cargo-fuzz (installed here when
# missing); otherwise, or with GPUDOCTOR_FUZZ_MODE=stable, the stable runner
# (stable/src/bin/stable.rs): the seeds plus deterministic mutations, no coverage feedback.
# Either way each input runs on a thread with the probes' 2 MiB stack, and a failing
# input is saved under fuzz/artifacts/TARGET/.
set -euo pipefail
cd "$(dirname "$0")"

secs="${1:-${GPUDOCTOR_FUZZ_SECONDS:-15}}"
targets=(ldcache elf fatbin pep440 pep508 cuda_versions proc alloc_conf dist_metadata saved_report fix_script image_layout config mcp)
# The fuzz workspace has its own lock file, kept in step with the main one; not --locked,
# so a dependency added to gpudoctor does not fail this step before the file is updated.

# GPUDOCTOR_BUILD_CACHE=DIR: cargo-fuzz is installed under DIR/cargo-fuzz when missing, and the
# targets build in DIR/fuzz, so a later run (another clone too) rebuilds only what changed.
cache="${GPUDOCTOR_BUILD_CACHE:-}"
target_dir=()
stable_dir=target
if [[ -n "$cache" ]]; then
    export PATH="$cache/cargo-fuzz/bin:$PATH"
    target_dir=(--target-dir "$cache/fuzz")
    stable_dir="$cache/fuzz"
fi
mode=stable
if [[ "${GPUDOCTOR_FUZZ_MODE:-auto}" != stable ]] && cargo +nightly --version >/dev/null 2>&1; then
    if cargo fuzz --version >/dev/null 2>&1 ||
        cargo install cargo-fuzz --locked ${cache:+--root "$cache/cargo-fuzz"} >/dev/null 2>&1; then
        mode=libfuzzer
    else
        echo "fuzz: nightly is here but cargo-fuzz could not be installed: stable runner instead"
    fi
fi

start=$SECONDS
failed=()
summary=()
if [[ $mode == libfuzzer ]]; then
    echo "fuzz: libFuzzer (cargo +nightly fuzz, no sanitizer), ${secs} s per target"
    # One build for every target. A short run gains nothing from opt-level 3: opt-level 1
    # with line tables only builds in 3/4 of the time (`cargo fuzz run` by hand keeps the
    # profile of Cargo.toml).
    CARGO_PROFILE_RELEASE_OPT_LEVEL=1 CARGO_PROFILE_RELEASE_DEBUG=line-tables-only \
        cargo +nightly fuzz build -s none "${target_dir[@]}"
    built=$SECONDS
    fuzz_one() { # TARGET: one libFuzzer run; its outcome goes to artifacts/TARGET.result
        local t=$1 log="artifacts/$1.log" max_len
        mkdir -p "corpus/$t" "artifacts/$t"
        # Inputs up to 16 KiB (deep nesting: an 8 KB marker overflowed a probe thread) or
        # the largest seed; the custom mutator turns libFuzzer's slow length growth off.
        max_len=$(find "seeds/$t" -type f -printf '%s\n' | sort -n | tail -n 1)
        max_len=$((max_len > 16384 ? max_len : 16384))
        if CARGO_PROFILE_RELEASE_OPT_LEVEL=1 CARGO_PROFILE_RELEASE_DEBUG=line-tables-only \
            cargo +nightly fuzz run -s none "${target_dir[@]}" "$t" "corpus/$t" "seeds/$t" -- \
            -max_total_time="$secs" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
            -print_final_stats=1 >"$log" 2>&1; then
            echo ok >"artifacts/$t.result"
        else
            echo failed >"artifacts/$t.result"
        fi
    }
    # libFuzzer runs one thread: one target per core at a time.
    jobs_max=$(nproc 2>/dev/null || echo 2)
    for t in "${targets[@]}"; do
        rm -f "artifacts/$t.result"
        while (($(jobs -rp | wc -l) >= jobs_max)); do wait -n || true; done
        fuzz_one "$t" &
    done
    wait
    for t in "${targets[@]}"; do
        log="artifacts/$t.log"
        if [[ "$(cat "artifacts/$t.result" 2>/dev/null)" == ok ]]; then
            result=ok
        else
            result="FAILED (input under fuzz/artifacts/$t/, log $log)"
            failed+=("$t")
            grep -av "^#[0-9]" "$log" | tail -n 30 | cut -c1-300
        fi
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
        summary+=("$(printf '%-14s %10s execs  %s' "$t" "${execs:-?}" "$result")")
    done
else
    echo "fuzz: stable runner (no nightly cargo-fuzz: seeds + deterministic mutations, no coverage feedback), at most ${secs} s per target"
    cargo build --release -p gpudoctor-fuzz-stable --bin stable "${target_dir[@]}"
    built=$SECONDS
    for t in "${targets[@]}"; do
        # One process per target: an abort (stack overflow) ends only its own run.
        if out=$("$stable_dir/release/stable" --execs 50000 --max-seconds "$secs" "$t" 2>&1); then
            summary+=("$(tail -n 1 <<<"$out")")
        else
            echo "$out" | tail -n 30 | cut -c1-300
            failed+=("$t")
            summary+=("$(printf '%-14s FAILED (input under fuzz/artifacts/%s/)' "$t" "$t")")
        fi
    done
fi

echo "fuzz ($mode): build $((built - start)) s, targets $((SECONDS - built)) s"
printf '  %s\n' "${summary[@]}"
if ((${#failed[@]})); then
    echo "fuzz: failures in ${failed[*]}" >&2
    exit 1
fi
