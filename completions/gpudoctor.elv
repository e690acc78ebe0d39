
use builtin;
use str;

set edit:completion:arg-completer[gpudoctor] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'gpudoctor'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'gpudoctor'= {
            cand --format 'Output format'
            cand --fail-on 'Exit 1 when a finding at or above this severity exists [default: error]'
            cand --only 'Run only these probes and/or report only these codes (comma-separated)'
            cand --skip 'Skip these probes and/or codes (comma-separated)'
            cand --root 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)'
            cand --timeout 'Time budget in seconds (default 5; 60 with --python-import); a probe still running then is reported as timed out. The smoke test''s driver calls may go this long without answering (default 30) before a GPU is reported as hung'
            cand --from 'Re-run the rules on a report or snapshot saved by `--format json` (`-` for stdin); no probing'
            cand --user 'Judge device-node access for this user (name or uid) instead of the caller'
            cand --nvml-lib 'Load NVML from this file instead of the loader''s libnvidia-ml.so.1 (also GPUDOCTOR_NVML_LIB); never from inside --root'
            cand --python 'The Python interpreter whose environment to inspect first (default: python or python3 on PATH, VIRTUAL_ENV, CONDA_PREFIX, ./.venv)'
            cand --cuda-lib 'Load libcuda from this file instead of the loader''s libcuda.so.1 for the smoke test (also GPUDOCTOR_CUDA_LIB); never from inside --root'
            cand --matmul-size 'Smoke test: N of the N×N FP32 matmul (16–8192) [default: 1024]'
            cand --mem-fraction 'Smoke test: share of the free GPU memory the allocation probe fills (0.01–0.95; at most 0.5 where other processes use the GPU) [default: 0.9]'
            cand --transfer-size 'Smoke test: MiB per host↔device copy in the bandwidth test, per GPU↔GPU peer copy (up to 64), and per GPU in --nccl''s all-reduce (1–4096) [default: 256]'
            cand --nccl-lib 'With --nccl: load this libnccl instead of the one the loader gives torch (also GPUDOCTOR_NCCL_LIB); never from inside --root'
            cand --image 'Judge a container image (OCI layout directory, OCI archive, or `docker save`/`podman save` tarball; PATH:TAG picks one of several) against this host (or the host tree --root names), without running it'
            cand --preflight 'A gate for a scheduler (Slurm prolog, Kubernetes init container): the static checks, the kernel log, the link counters and a short smoke test, all within SECS seconds [default: 15]'
            cand --since 'Judge the kernel log from TIME on: RFC 3339 (`2026-12-07T10:00:00Z`; `2026-12-07 10:00:00` is UTC) or a span before now (`2h`, `30min`, `1day`)'
            cand --output 'Also write the report (in --format) to PATH, `{host}` replaced by the node''s name; stdout gets the human report'
            cand --baseline 'After the report, show what differs from this saved report (`check --format json`)'
            cand --expect-gpus 'Expect N GPUs on each node: fewer is an error (GD087) naming the missing ones (also gpus_per_node in the configuration, GPUDOCTOR_EXPECT_GPUS)'
            cand --color 'Colour: auto (the default), always or never'
            cand --config 'Read this configuration file after the system''s and the user''s (also GPUDOCTOR_CONFIG)'
            cand --json 'Shorthand for --format json'
            cand --python-import 'Also import torch in that interpreter (never under --root) and compare its answers; the default --timeout becomes 60 s'
            cand --nccl 'Smoke test: also run an NCCL all-reduce over every tested GPU (checked, timed, transports named)'
            cand --no-smoke '`check` without the on-device smoke test'
            cand --quick 'A quick static check: no smoke test (same as --no-smoke)'
            cand --since-boot 'Judge only this boot''s kernel log (a syslog file''s earlier boots are left out)'
            cand --fix-script 'Print the fixes of the findings as a shell script to review and run (never run by gpudoctor)'
            cand -q 'Print no report: only the exit code says the outcome'
            cand --quiet 'Print no report: only the exit code says the outcome'
            cand -v 'More detail (-vv: more still)'
            cand --verbose 'More detail (-vv: more still)'
            cand --no-config 'Read no configuration file and no GPUDOCTOR_* policy variable'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand check 'Run every probe and rule and print the report (the default)'
            cand toolkit 'Every CUDA toolkit, and which one nvcc and the loader pick'
            cand libs 'What the loader binds for each CUDA module, and whether it loads'
            cand devices 'The GPUs as NVML sees them, or everything about one of them'
            cand smoke 'Prove the GPUs compute: matmul, memory, transfer bandwidth'
            cand recommend 'What to install (torch, jax, vllm, …), and why'
            cand fleet 'Node reports together: the fleet''s shape, outliers, findings'
            cand diff 'The facts and findings that differ between two saved reports'
            cand explain 'Explain a finding code (GD012, gd012 or 12), or list every code'
            cand config 'Print the effective configuration and where each value came from'
            cand schema 'Print the JSON Schema of the report `check --format json` prints'
            cand bundle 'Pack a redacted support bundle for a bug report'
            cand mcp 'Serve the read-only commands to AI assistants over MCP (stdio)'
            cand completions 'Print the shell completion script for SHELL'
            cand man 'Print the manual page (roff), e.g. `gpudoctor man | man -l -`'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'gpudoctor;check'= {
            cand --format 'Output format'
            cand --fail-on 'Exit 1 when a finding at or above this severity exists [default: error]'
            cand --only 'Run only these probes and/or report only these codes (comma-separated)'
            cand --skip 'Skip these probes and/or codes (comma-separated)'
            cand --root 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)'
            cand --timeout 'Time budget in seconds (default 5; 60 with --python-import); a probe still running then is reported as timed out. The smoke test''s driver calls may go this long without answering (default 30) before a GPU is reported as hung'
            cand --from 'Re-run the rules on a report or snapshot saved by `--format json` (`-` for stdin); no probing'
            cand --user 'Judge device-node access for this user (name or uid) instead of the caller'
            cand --nvml-lib 'Load NVML from this file instead of the loader''s libnvidia-ml.so.1 (also GPUDOCTOR_NVML_LIB); never from inside --root'
            cand --python 'The Python interpreter whose environment to inspect first (default: python or python3 on PATH, VIRTUAL_ENV, CONDA_PREFIX, ./.venv)'
            cand --cuda-lib 'Load libcuda from this file instead of the loader''s libcuda.so.1 for the smoke test (also GPUDOCTOR_CUDA_LIB); never from inside --root'
            cand --matmul-size 'Smoke test: N of the N×N FP32 matmul (16–8192) [default: 1024]'
            cand --mem-fraction 'Smoke test: share of the free GPU memory the allocation probe fills (0.01–0.95; at most 0.5 where other processes use the GPU) [default: 0.9]'
            cand --transfer-size 'Smoke test: MiB per host↔device copy in the bandwidth test, per GPU↔GPU peer copy (up to 64), and per GPU in --nccl''s all-reduce (1–4096) [default: 256]'
            cand --nccl-lib 'With --nccl: load this libnccl instead of the one the loader gives torch (also GPUDOCTOR_NCCL_LIB); never from inside --root'
            cand --image 'Judge a container image (OCI layout directory, OCI archive, or `docker save`/`podman save` tarball; PATH:TAG picks one of several) against this host (or the host tree --root names), without running it'
            cand --preflight 'A gate for a scheduler (Slurm prolog, Kubernetes init container): the static checks, the kernel log, the link counters and a short smoke test, all within SECS seconds [default: 15]'
            cand --since 'Judge the kernel log from TIME on: RFC 3339 (`2026-12-07T10:00:00Z`; `2026-12-07 10:00:00` is UTC) or a span before now (`2h`, `30min`, `1day`)'
            cand --output 'Also write the report (in --format) to PATH, `{host}` replaced by the node''s name; stdout gets the human report'
            cand --baseline 'After the report, show what differs from this saved report (`check --format json`)'
            cand --expect-gpus 'Expect N GPUs on each node: fewer is an error (GD087) naming the missing ones (also gpus_per_node in the configuration, GPUDOCTOR_EXPECT_GPUS)'
            cand --color 'Colour: auto (the default), always or never'
            cand --config 'Read this configuration file after the system''s and the user''s (also GPUDOCTOR_CONFIG)'
            cand --json 'Shorthand for --format json'
            cand --python-import 'Also import torch in that interpreter (never under --root) and compare its answers; the default --timeout becomes 60 s'
            cand --nccl 'Smoke test: also run an NCCL all-reduce over every tested GPU (checked, timed, transports named)'
            cand --no-smoke '`check` without the on-device smoke test'
            cand --quick 'A quick static check: no smoke test (same as --no-smoke)'
            cand --since-boot 'Judge only this boot''s kernel log (a syslog file''s earlier boots are left out)'
            cand --fix-script 'Print the fixes of the findings as a shell script to review and run (never run by gpudoctor)'
            cand -q 'Print no report: only the exit code says the outcome'
            cand --quiet 'Print no report: only the exit code says the outcome'
            cand -v 'More detail: passing checks, each fact''s source, every registered variable (-vv: the probes'' timings)'
            cand --verbose 'More detail: passing checks, each fact''s source, every registered variable (-vv: the probes'' timings)'
            cand --no-config 'Read no configuration file and no GPUDOCTOR_* policy variable'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'gpudoctor;toolkit'= {
            cand --format 'Output format'
            cand --fail-on 'Exit 1 when a finding at or above this severity exists [default: error]'
            cand --only 'Run only these probes and/or report only these codes (comma-separated)'
            cand --skip 'Skip these probes and/or codes (comma-separated)'
            cand --root 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)'
            cand --timeout 'Overall time budget in seconds (default 5); a probe still running then is reported as timed out'
            cand --from 'Re-run the rules on a report or snapshot saved by `--format json` (`-` for stdin); no probing'
            cand --color 'Colour: auto (the default), always or never'
            cand --config 'Read this configuration file after the system''s and the user''s (also GPUDOCTOR_CONFIG)'
            cand --json 'Shorthand for --format json'
            cand -q 'Print no report: only the exit code says the outcome'
            cand --quiet 'Print no report: only the exit code says the outcome'
            cand -v 'More detail: every candidate path of each CUDA library, not only the one the loader picks'
            cand --verbose 'More detail: every candidate path of each CUDA library, not only the one the loader picks'
            cand --no-config 'Read no configuration file and no GPUDOCTOR_* policy variable'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'gpudoctor;libs'= {
            cand --python 'The Python interpreter whose environment to inspect first (default: python or python3 on PATH, VIRTUAL_ENV, CONDA_PREFIX, ./.venv)'
            cand --format 'Output format'
            cand --fail-on 'Exit 1 when a finding at or above this severity exists [default: error]'
            cand --only 'Run only these probes and/or report only these codes (comma-separated)'
            cand --skip 'Skip these probes and/or codes (comma-separated)'
            cand --root 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)'
            cand --timeout 'Overall time budget in seconds (default 5); a probe still running then is reported as timed out'
            cand --from 'Re-run the rules on a report or snapshot saved by `--format json` (`-` for stdin); no probing'
            cand --color 'Colour: auto (the default), always or never'
            cand --config 'Read this configuration file after the system''s and the user''s (also GPUDOCTOR_CONFIG)'
            cand --all 'Show every library bound, not only the CUDA libraries and the failures'
            cand --json 'Shorthand for --format json'
            cand -q 'Print no report: only the exit code says the outcome'
            cand --quiet 'Print no report: only the exit code says the outcome'
            cand -v 'More detail (each command says which in its own help)'
            cand --verbose 'More detail (each command says which in its own help)'
            cand --no-config 'Read no configuration file and no GPUDOCTOR_* policy variable'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'gpudoctor;devices'= {
            cand --format 'Output format'
            cand --fail-on 'Exit 1 when a finding at or above this severity exists [default: error]'
            cand --only 'Run only these probes and/or report only these codes (comma-separated)'
            cand --skip 'Skip these probes and/or codes (comma-separated)'
            cand --root 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)'
            cand --timeout 'Overall time budget in seconds (default 5); a probe still running then is reported as timed out'
            cand --from 'Re-run the rules on a report or snapshot saved by `--format json` (`-` for stdin); no probing'
            cand --user 'Judge device-node access for this user (name or uid) instead of the caller'
            cand --nvml-lib 'Load NVML from this file instead of the loader''s libnvidia-ml.so.1 (also GPUDOCTOR_NVML_LIB); never from inside --root'
            cand --color 'Colour: auto (the default), always or never'
            cand --config 'Read this configuration file after the system''s and the user''s (also GPUDOCTOR_CONFIG)'
            cand --detail 'Show everything about every GPU'
            cand --wide 'Show every column of the table, however wide'
            cand --topo 'Show how the GPUs connect: a link matrix like `nvidia-smi topo -m`, with NUMA and CPU affinity, RDMA NICs and the IOMMU'
            cand --json 'Shorthand for --format json'
            cand -q 'Print no report: only the exit code says the outcome'
            cand --quiet 'Print no report: only the exit code says the outcome'
            cand -v 'More detail (each command says which in its own help)'
            cand --verbose 'More detail (each command says which in its own help)'
            cand --no-config 'Read no configuration file and no GPUDOCTOR_* policy variable'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'gpudoctor;smoke'= {
            cand --device 'Only this GPU: its CUDA ordinal (after CUDA_VISIBLE_DEVICES), UUID (or a unique prefix) or PCI bus id; default: every visible GPU at once'
            cand --format 'Output format'
            cand --fail-on 'Exit 1 when a finding at or above this severity exists [default: error]'
            cand --only 'Run only these probes and/or report only these codes (comma-separated)'
            cand --skip 'Skip these probes and/or codes (comma-separated)'
            cand --root 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)'
            cand --timeout 'How long the driver may go without answering, in seconds (default 30; 60 with --nccl), before a GPU is reported as hung; a slow GPU that keeps answering runs to its end'
            cand --nvml-lib 'Load NVML from this file instead of the loader''s libnvidia-ml.so.1 (also GPUDOCTOR_NVML_LIB); never from inside --root'
            cand --cuda-lib 'Load libcuda from this file instead of the loader''s libcuda.so.1 for the smoke test (also GPUDOCTOR_CUDA_LIB); never from inside --root'
            cand --matmul-size 'Smoke test: N of the N×N FP32 matmul (16–8192) [default: 1024]'
            cand --mem-fraction 'Smoke test: share of the free GPU memory the allocation probe fills (0.01–0.95; at most 0.5 where other processes use the GPU) [default: 0.9]'
            cand --transfer-size 'Smoke test: MiB per host↔device copy in the bandwidth test, per GPU↔GPU peer copy (up to 64), and per GPU in --nccl''s all-reduce (1–4096) [default: 256]'
            cand --nccl-lib 'With --nccl: load this libnccl instead of the one the loader gives torch (also GPUDOCTOR_NCCL_LIB); never from inside --root'
            cand --color 'Colour: auto (the default), always or never'
            cand --config 'Read this configuration file after the system''s and the user''s (also GPUDOCTOR_CONFIG)'
            cand --json 'Shorthand for --format json'
            cand --nccl 'Smoke test: also run an NCCL all-reduce over every tested GPU (checked, timed, transports named)'
            cand -q 'Print no report: only the exit code says the outcome'
            cand --quiet 'Print no report: only the exit code says the outcome'
            cand -v 'More detail (each command says which in its own help)'
            cand --verbose 'More detail (each command says which in its own help)'
            cand --no-config 'Read no configuration file and no GPUDOCTOR_* policy variable'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'gpudoctor;recommend'= {
            cand --driver 'Answer for this NVIDIA driver version (e.g. 550.54.15) instead of the installed one'
            cand --gpu 'Answer for these GPUs: compute capabilities (sm_120, 9.0) or names (RTX 5090), comma-separated'
            cand --python 'The Python: a version (3.12), or the interpreter whose environment to inspect'
            cand --platform 'The CPU architecture to answer for (x86_64, aarch64)'
            cand --installer 'The installer whose commands to print [default: the one that manages the environment, else pip]'
            cand --cuda 'The CUDA wanted: a major (12) or major.minor (12.8, cu128)'
            cand --format 'Output format'
            cand --root 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)'
            cand --timeout 'Overall time budget in seconds (default 5); a probe still running then is reported as timed out'
            cand --from 'Re-run the rules on a report or snapshot saved by `--format json` (`-` for stdin); no probing'
            cand --nvml-lib 'Load NVML from this file instead of the loader''s libnvidia-ml.so.1 (also GPUDOCTOR_NVML_LIB); never from inside --root'
            cand --color 'Colour: auto (the default), always or never'
            cand --config 'Read this configuration file after the system''s and the user''s (also GPUDOCTOR_CONFIG)'
            cand --fresh 'Answer for a new environment: ignore what the current one has installed'
            cand --json 'Shorthand for --format json'
            cand -q 'Print no report: only the exit code says the outcome'
            cand --quiet 'Print no report: only the exit code says the outcome'
            cand -v 'More detail: every version considered for each pick'
            cand --verbose 'More detail: every version considered for each pick'
            cand --no-config 'Read no configuration file and no GPUDOCTOR_* policy variable'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'gpudoctor;fleet'= {
            cand --format 'Output format'
            cand --fail-on 'Exit 1 when a finding at or above this severity exists [default: error]'
            cand --only 'Run only these probes and/or report only these codes (comma-separated)'
            cand --skip 'Skip these probes and/or codes (comma-separated)'
            cand --expect-gpus 'Expect N GPUs on each node: fewer is an error (GD087) naming the missing ones (also gpus_per_node in the configuration, GPUDOCTOR_EXPECT_GPUS)'
            cand --color 'Colour: auto (the default), always or never'
            cand --config 'Read this configuration file after the system''s and the user''s (also GPUDOCTOR_CONFIG)'
            cand --json 'Shorthand for --format json'
            cand -q 'Print no report: only the exit code says the outcome'
            cand --quiet 'Print no report: only the exit code says the outcome'
            cand -v 'More detail (each command says which in its own help)'
            cand --verbose 'More detail (each command says which in its own help)'
            cand --no-config 'Read no configuration file and no GPUDOCTOR_* policy variable'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'gpudoctor;diff'= {
            cand --format 'Output format'
            cand --fail-on 'Exit 1 only when a finding at or above this severity appeared or got worse (without it: when anything differs, as diff(1))'
            cand --color 'Colour: auto (the default), always or never'
            cand --config 'Read this configuration file after the system''s and the user''s (also GPUDOCTOR_CONFIG)'
            cand --json 'Shorthand for --format json'
            cand -q 'Print no report: only the exit code says the outcome'
            cand --quiet 'Print no report: only the exit code says the outcome'
            cand -v 'More detail (each command says which in its own help)'
            cand --verbose 'More detail (each command says which in its own help)'
            cand --no-config 'Read no configuration file and no GPUDOCTOR_* policy variable'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'gpudoctor;explain'= {
            cand --format 'Output format'
            cand --color 'Colour: auto (the default), always or never'
            cand --config 'Read this configuration file after the system''s and the user''s (also GPUDOCTOR_CONFIG)'
            cand --list 'List every code with its one-line title'
            cand --json 'Shorthand for --format json'
            cand -q 'Print no report: only the exit code says the outcome'
            cand --quiet 'Print no report: only the exit code says the outcome'
            cand -v 'More detail (each command says which in its own help)'
            cand --verbose 'More detail (each command says which in its own help)'
            cand --no-config 'Read no configuration file and no GPUDOCTOR_* policy variable'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'gpudoctor;config'= {
            cand --format 'Output format'
            cand --color 'Colour: auto (the default), always or never'
            cand --config 'Read this configuration file after the system''s and the user''s (also GPUDOCTOR_CONFIG)'
            cand --json 'Shorthand for --format json'
            cand -q 'Print no report: only the exit code says the outcome'
            cand --quiet 'Print no report: only the exit code says the outcome'
            cand -v 'More detail (each command says which in its own help)'
            cand --verbose 'More detail (each command says which in its own help)'
            cand --no-config 'Read no configuration file and no GPUDOCTOR_* policy variable'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'gpudoctor;schema'= {
            cand --color 'Colour: auto (the default), always or never'
            cand --config 'Read this configuration file after the system''s and the user''s (also GPUDOCTOR_CONFIG)'
            cand -q 'Print no report: only the exit code says the outcome'
            cand --quiet 'Print no report: only the exit code says the outcome'
            cand -v 'More detail (each command says which in its own help)'
            cand --verbose 'More detail (each command says which in its own help)'
            cand --no-config 'Read no configuration file and no GPUDOCTOR_* policy variable'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'gpudoctor;bundle'= {
            cand -o 'Where to write the archive (default ./gpudoctor-bundle.tar.gz)'
            cand --output 'Where to write the archive (default ./gpudoctor-bundle.tar.gz)'
            cand --python 'The Python interpreter whose environment to inspect'
            cand --cuda-lib 'Load libcuda from this file for the smoke test'
            cand --root 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)'
            cand --timeout 'Overall time budget in seconds (default 5); a probe still running then is reported as timed out'
            cand --user 'Judge device-node access for this user (name or uid) instead of the caller'
            cand --nvml-lib 'Load NVML from this file instead of the loader''s libnvidia-ml.so.1 (also GPUDOCTOR_NVML_LIB); never from inside --root'
            cand --color 'Colour: auto (the default), always or never'
            cand --config 'Read this configuration file after the system''s and the user''s (also GPUDOCTOR_CONFIG)'
            cand --smoke 'Also run the on-device smoke test and include its result'
            cand --no-redact 'Keep host names, user names, addresses and token-looking strings (they are replaced by placeholders by default)'
            cand -q 'Print no report: only the exit code says the outcome'
            cand --quiet 'Print no report: only the exit code says the outcome'
            cand -v 'More detail (each command says which in its own help)'
            cand --verbose 'More detail (each command says which in its own help)'
            cand --no-config 'Read no configuration file and no GPUDOCTOR_* policy variable'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'gpudoctor;mcp'= {
            cand --color 'Colour: auto (the default), always or never'
            cand --config 'Read this configuration file after the system''s and the user''s (also GPUDOCTOR_CONFIG)'
            cand -q 'Print no report: only the exit code says the outcome'
            cand --quiet 'Print no report: only the exit code says the outcome'
            cand -v 'More detail (each command says which in its own help)'
            cand --verbose 'More detail (each command says which in its own help)'
            cand --no-config 'Read no configuration file and no GPUDOCTOR_* policy variable'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'gpudoctor;completions'= {
            cand --color 'Colour: auto (the default), always or never'
            cand --config 'Read this configuration file after the system''s and the user''s (also GPUDOCTOR_CONFIG)'
            cand -q 'Print no report: only the exit code says the outcome'
            cand --quiet 'Print no report: only the exit code says the outcome'
            cand -v 'More detail (each command says which in its own help)'
            cand --verbose 'More detail (each command says which in its own help)'
            cand --no-config 'Read no configuration file and no GPUDOCTOR_* policy variable'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'gpudoctor;man'= {
            cand --color 'Colour: auto (the default), always or never'
            cand --config 'Read this configuration file after the system''s and the user''s (also GPUDOCTOR_CONFIG)'
            cand -q 'Print no report: only the exit code says the outcome'
            cand --quiet 'Print no report: only the exit code says the outcome'
            cand -v 'More detail (each command says which in its own help)'
            cand --verbose 'More detail (each command says which in its own help)'
            cand --no-config 'Read no configuration file and no GPUDOCTOR_* policy variable'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'gpudoctor;help'= {
            cand check 'Run every probe and rule and print the report (the default)'
            cand toolkit 'Every CUDA toolkit, and which one nvcc and the loader pick'
            cand libs 'What the loader binds for each CUDA module, and whether it loads'
            cand devices 'The GPUs as NVML sees them, or everything about one of them'
            cand smoke 'Prove the GPUs compute: matmul, memory, transfer bandwidth'
            cand recommend 'What to install (torch, jax, vllm, …), and why'
            cand fleet 'Node reports together: the fleet''s shape, outliers, findings'
            cand diff 'The facts and findings that differ between two saved reports'
            cand explain 'Explain a finding code (GD012, gd012 or 12), or list every code'
            cand config 'Print the effective configuration and where each value came from'
            cand schema 'Print the JSON Schema of the report `check --format json` prints'
            cand bundle 'Pack a redacted support bundle for a bug report'
            cand mcp 'Serve the read-only commands to AI assistants over MCP (stdio)'
            cand completions 'Print the shell completion script for SHELL'
            cand man 'Print the manual page (roff), e.g. `gpudoctor man | man -l -`'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'gpudoctor;help;check'= {
        }
        &'gpudoctor;help;toolkit'= {
        }
        &'gpudoctor;help;libs'= {
        }
        &'gpudoctor;help;devices'= {
        }
        &'gpudoctor;help;smoke'= {
        }
        &'gpudoctor;help;recommend'= {
        }
        &'gpudoctor;help;fleet'= {
        }
        &'gpudoctor;help;diff'= {
        }
        &'gpudoctor;help;explain'= {
        }
        &'gpudoctor;help;config'= {
        }
        &'gpudoctor;help;schema'= {
        }
        &'gpudoctor;help;bundle'= {
        }
        &'gpudoctor;help;mcp'= {
        }
        &'gpudoctor;help;completions'= {
        }
        &'gpudoctor;help;man'= {
        }
        &'gpudoctor;help;help'= {
        }
    ]
    $completions[$command]
}
