
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'gpudoctor' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'gpudoctor'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'gpudoctor' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--fail-on', '--fail-on', [CompletionResultType]::ParameterName, 'Exit 1 when a finding at or above this severity exists [default: error]')
            [CompletionResult]::new('--only', '--only', [CompletionResultType]::ParameterName, 'Run only these probes and/or report only these codes (comma-separated)')
            [CompletionResult]::new('--skip', '--skip', [CompletionResultType]::ParameterName, 'Skip these probes and/or codes (comma-separated)')
            [CompletionResult]::new('--root', '--root', [CompletionResultType]::ParameterName, 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Time budget in seconds (default 5; 60 with --python-import); a probe still running then is reported as timed out. The smoke test''s driver calls may go this long without answering (default 30) before a GPU is reported as hung')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Re-run the rules on a report or snapshot saved by `--format json` (`-` for stdin); no probing')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'Judge device-node access for this user (name or uid) instead of the caller')
            [CompletionResult]::new('--nvml-lib', '--nvml-lib', [CompletionResultType]::ParameterName, 'Load NVML from this file instead of the loader''s libnvidia-ml.so.1 (also GPUDOCTOR_NVML_LIB); never from inside --root')
            [CompletionResult]::new('--python', '--python', [CompletionResultType]::ParameterName, 'The Python interpreter whose environment to inspect first (default: python or python3 on PATH, VIRTUAL_ENV, CONDA_PREFIX, ./.venv)')
            [CompletionResult]::new('--cuda-lib', '--cuda-lib', [CompletionResultType]::ParameterName, 'Load libcuda from this file instead of the loader''s libcuda.so.1 for the smoke test (also GPUDOCTOR_CUDA_LIB); never from inside --root')
            [CompletionResult]::new('--matmul-size', '--matmul-size', [CompletionResultType]::ParameterName, 'Smoke test: N of the N×N FP32 matmul (16–8192) [default: 1024]')
            [CompletionResult]::new('--mem-fraction', '--mem-fraction', [CompletionResultType]::ParameterName, 'Smoke test: share of the free GPU memory the allocation probe fills (0.01–0.95; at most 0.5 where other processes use the GPU) [default: 0.9]')
            [CompletionResult]::new('--transfer-size', '--transfer-size', [CompletionResultType]::ParameterName, 'Smoke test: MiB per host↔device copy in the bandwidth test, per GPU↔GPU peer copy (up to 64), and per GPU in --nccl''s all-reduce (1–4096) [default: 256]')
            [CompletionResult]::new('--nccl-lib', '--nccl-lib', [CompletionResultType]::ParameterName, 'With --nccl: load this libnccl instead of the one the loader gives torch (also GPUDOCTOR_NCCL_LIB); never from inside --root')
            [CompletionResult]::new('--image', '--image', [CompletionResultType]::ParameterName, 'Judge a container image (OCI layout directory, OCI archive, or `docker save`/`podman save` tarball; PATH:TAG picks one of several) against this host (or the host tree --root names), without running it')
            [CompletionResult]::new('--preflight', '--preflight', [CompletionResultType]::ParameterName, 'A gate for a scheduler (Slurm prolog, Kubernetes init container): the static checks, the kernel log, the link counters and a short smoke test, all within SECS seconds [default: 15]')
            [CompletionResult]::new('--since', '--since', [CompletionResultType]::ParameterName, 'Judge the kernel log from TIME on: RFC 3339 (`2026-12-07T10:00:00Z`; `2026-12-07 10:00:00` is UTC) or a span before now (`2h`, `30min`, `1day`)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Also write the report (in --format) to PATH, `{host}` replaced by the node''s name; stdout gets the human report')
            [CompletionResult]::new('--baseline', '--baseline', [CompletionResultType]::ParameterName, 'After the report, show what differs from this saved report (`check --format json`)')
            [CompletionResult]::new('--expect-gpus', '--expect-gpus', [CompletionResultType]::ParameterName, 'Expect N GPUs on each node: fewer is an error (GD087) naming the missing ones (also gpus_per_node in the configuration, GPUDOCTOR_EXPECT_GPUS)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (the default), always or never')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Read this configuration file after the system''s and the user''s (also GPUDOCTOR_CONFIG)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Shorthand for --format json')
            [CompletionResult]::new('--python-import', '--python-import', [CompletionResultType]::ParameterName, 'Also import torch in that interpreter (never under --root) and compare its answers; the default --timeout becomes 60 s')
            [CompletionResult]::new('--nccl', '--nccl', [CompletionResultType]::ParameterName, 'Smoke test: also run an NCCL all-reduce over every tested GPU (checked, timed, transports named)')
            [CompletionResult]::new('--no-smoke', '--no-smoke', [CompletionResultType]::ParameterName, '`check` without the on-device smoke test')
            [CompletionResult]::new('--quick', '--quick', [CompletionResultType]::ParameterName, 'A quick static check: no smoke test (same as --no-smoke)')
            [CompletionResult]::new('--since-boot', '--since-boot', [CompletionResultType]::ParameterName, 'Judge only this boot''s kernel log (a syslog file''s earlier boots are left out)')
            [CompletionResult]::new('--fix-script', '--fix-script', [CompletionResultType]::ParameterName, 'Print the fixes of the findings as a shell script to review and run (never run by gpudoctor)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no report: only the exit code says the outcome')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no report: only the exit code says the outcome')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail (-vv: more still)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail (-vv: more still)')
            [CompletionResult]::new('--no-config', '--no-config', [CompletionResultType]::ParameterName, 'Read no configuration file and no GPUDOCTOR_* policy variable')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Run every probe and rule and print the report (the default)')
            [CompletionResult]::new('toolkit', 'toolkit', [CompletionResultType]::ParameterValue, 'Every CUDA toolkit, and which one nvcc and the loader pick')
            [CompletionResult]::new('libs', 'libs', [CompletionResultType]::ParameterValue, 'What the loader binds for each CUDA module, and whether it loads')
            [CompletionResult]::new('devices', 'devices', [CompletionResultType]::ParameterValue, 'The GPUs as NVML sees them, or everything about one of them')
            [CompletionResult]::new('smoke', 'smoke', [CompletionResultType]::ParameterValue, 'Prove the GPUs compute: matmul, memory, transfer bandwidth')
            [CompletionResult]::new('recommend', 'recommend', [CompletionResultType]::ParameterValue, 'What to install (torch, jax, vllm, …), and why')
            [CompletionResult]::new('fleet', 'fleet', [CompletionResultType]::ParameterValue, 'Node reports together: the fleet''s shape, outliers, findings')
            [CompletionResult]::new('diff', 'diff', [CompletionResultType]::ParameterValue, 'The facts and findings that differ between two saved reports')
            [CompletionResult]::new('explain', 'explain', [CompletionResultType]::ParameterValue, 'Explain a finding code (GD012, gd012 or 12), or list every code')
            [CompletionResult]::new('config', 'config', [CompletionResultType]::ParameterValue, 'Print the effective configuration and where each value came from')
            [CompletionResult]::new('schema', 'schema', [CompletionResultType]::ParameterValue, 'Print the JSON Schema of the report `check --format json` prints')
            [CompletionResult]::new('bundle', 'bundle', [CompletionResultType]::ParameterValue, 'Pack a redacted support bundle for a bug report')
            [CompletionResult]::new('mcp', 'mcp', [CompletionResultType]::ParameterValue, 'Serve the read-only commands to AI assistants over MCP (stdio)')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print the shell completion script for SHELL')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print the manual page (roff), e.g. `gpudoctor man | man -l -`')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'gpudoctor;check' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--fail-on', '--fail-on', [CompletionResultType]::ParameterName, 'Exit 1 when a finding at or above this severity exists [default: error]')
            [CompletionResult]::new('--only', '--only', [CompletionResultType]::ParameterName, 'Run only these probes and/or report only these codes (comma-separated)')
            [CompletionResult]::new('--skip', '--skip', [CompletionResultType]::ParameterName, 'Skip these probes and/or codes (comma-separated)')
            [CompletionResult]::new('--root', '--root', [CompletionResultType]::ParameterName, 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Time budget in seconds (default 5; 60 with --python-import); a probe still running then is reported as timed out. The smoke test''s driver calls may go this long without answering (default 30) before a GPU is reported as hung')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Re-run the rules on a report or snapshot saved by `--format json` (`-` for stdin); no probing')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'Judge device-node access for this user (name or uid) instead of the caller')
            [CompletionResult]::new('--nvml-lib', '--nvml-lib', [CompletionResultType]::ParameterName, 'Load NVML from this file instead of the loader''s libnvidia-ml.so.1 (also GPUDOCTOR_NVML_LIB); never from inside --root')
            [CompletionResult]::new('--python', '--python', [CompletionResultType]::ParameterName, 'The Python interpreter whose environment to inspect first (default: python or python3 on PATH, VIRTUAL_ENV, CONDA_PREFIX, ./.venv)')
            [CompletionResult]::new('--cuda-lib', '--cuda-lib', [CompletionResultType]::ParameterName, 'Load libcuda from this file instead of the loader''s libcuda.so.1 for the smoke test (also GPUDOCTOR_CUDA_LIB); never from inside --root')
            [CompletionResult]::new('--matmul-size', '--matmul-size', [CompletionResultType]::ParameterName, 'Smoke test: N of the N×N FP32 matmul (16–8192) [default: 1024]')
            [CompletionResult]::new('--mem-fraction', '--mem-fraction', [CompletionResultType]::ParameterName, 'Smoke test: share of the free GPU memory the allocation probe fills (0.01–0.95; at most 0.5 where other processes use the GPU) [default: 0.9]')
            [CompletionResult]::new('--transfer-size', '--transfer-size', [CompletionResultType]::ParameterName, 'Smoke test: MiB per host↔device copy in the bandwidth test, per GPU↔GPU peer copy (up to 64), and per GPU in --nccl''s all-reduce (1–4096) [default: 256]')
            [CompletionResult]::new('--nccl-lib', '--nccl-lib', [CompletionResultType]::ParameterName, 'With --nccl: load this libnccl instead of the one the loader gives torch (also GPUDOCTOR_NCCL_LIB); never from inside --root')
            [CompletionResult]::new('--image', '--image', [CompletionResultType]::ParameterName, 'Judge a container image (OCI layout directory, OCI archive, or `docker save`/`podman save` tarball; PATH:TAG picks one of several) against this host (or the host tree --root names), without running it')
            [CompletionResult]::new('--preflight', '--preflight', [CompletionResultType]::ParameterName, 'A gate for a scheduler (Slurm prolog, Kubernetes init container): the static checks, the kernel log, the link counters and a short smoke test, all within SECS seconds [default: 15]')
            [CompletionResult]::new('--since', '--since', [CompletionResultType]::ParameterName, 'Judge the kernel log from TIME on: RFC 3339 (`2026-12-07T10:00:00Z`; `2026-12-07 10:00:00` is UTC) or a span before now (`2h`, `30min`, `1day`)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Also write the report (in --format) to PATH, `{host}` replaced by the node''s name; stdout gets the human report')
            [CompletionResult]::new('--baseline', '--baseline', [CompletionResultType]::ParameterName, 'After the report, show what differs from this saved report (`check --format json`)')
            [CompletionResult]::new('--expect-gpus', '--expect-gpus', [CompletionResultType]::ParameterName, 'Expect N GPUs on each node: fewer is an error (GD087) naming the missing ones (also gpus_per_node in the configuration, GPUDOCTOR_EXPECT_GPUS)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (the default), always or never')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Read this configuration file after the system''s and the user''s (also GPUDOCTOR_CONFIG)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Shorthand for --format json')
            [CompletionResult]::new('--python-import', '--python-import', [CompletionResultType]::ParameterName, 'Also import torch in that interpreter (never under --root) and compare its answers; the default --timeout becomes 60 s')
            [CompletionResult]::new('--nccl', '--nccl', [CompletionResultType]::ParameterName, 'Smoke test: also run an NCCL all-reduce over every tested GPU (checked, timed, transports named)')
            [CompletionResult]::new('--no-smoke', '--no-smoke', [CompletionResultType]::ParameterName, '`check` without the on-device smoke test')
            [CompletionResult]::new('--quick', '--quick', [CompletionResultType]::ParameterName, 'A quick static check: no smoke test (same as --no-smoke)')
            [CompletionResult]::new('--since-boot', '--since-boot', [CompletionResultType]::ParameterName, 'Judge only this boot''s kernel log (a syslog file''s earlier boots are left out)')
            [CompletionResult]::new('--fix-script', '--fix-script', [CompletionResultType]::ParameterName, 'Print the fixes of the findings as a shell script to review and run (never run by gpudoctor)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no report: only the exit code says the outcome')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no report: only the exit code says the outcome')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail: passing checks, each fact''s source, every registered variable (-vv: the probes'' timings)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail: passing checks, each fact''s source, every registered variable (-vv: the probes'' timings)')
            [CompletionResult]::new('--no-config', '--no-config', [CompletionResultType]::ParameterName, 'Read no configuration file and no GPUDOCTOR_* policy variable')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'gpudoctor;toolkit' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--fail-on', '--fail-on', [CompletionResultType]::ParameterName, 'Exit 1 when a finding at or above this severity exists [default: error]')
            [CompletionResult]::new('--only', '--only', [CompletionResultType]::ParameterName, 'Run only these probes and/or report only these codes (comma-separated)')
            [CompletionResult]::new('--skip', '--skip', [CompletionResultType]::ParameterName, 'Skip these probes and/or codes (comma-separated)')
            [CompletionResult]::new('--root', '--root', [CompletionResultType]::ParameterName, 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Overall time budget in seconds (default 5); a probe still running then is reported as timed out')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Re-run the rules on a report or snapshot saved by `--format json` (`-` for stdin); no probing')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (the default), always or never')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Read this configuration file after the system''s and the user''s (also GPUDOCTOR_CONFIG)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Shorthand for --format json')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no report: only the exit code says the outcome')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no report: only the exit code says the outcome')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail: every candidate path of each CUDA library, not only the one the loader picks')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail: every candidate path of each CUDA library, not only the one the loader picks')
            [CompletionResult]::new('--no-config', '--no-config', [CompletionResultType]::ParameterName, 'Read no configuration file and no GPUDOCTOR_* policy variable')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'gpudoctor;libs' {
            [CompletionResult]::new('--python', '--python', [CompletionResultType]::ParameterName, 'The Python interpreter whose environment to inspect first (default: python or python3 on PATH, VIRTUAL_ENV, CONDA_PREFIX, ./.venv)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--fail-on', '--fail-on', [CompletionResultType]::ParameterName, 'Exit 1 when a finding at or above this severity exists [default: error]')
            [CompletionResult]::new('--only', '--only', [CompletionResultType]::ParameterName, 'Run only these probes and/or report only these codes (comma-separated)')
            [CompletionResult]::new('--skip', '--skip', [CompletionResultType]::ParameterName, 'Skip these probes and/or codes (comma-separated)')
            [CompletionResult]::new('--root', '--root', [CompletionResultType]::ParameterName, 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Overall time budget in seconds (default 5); a probe still running then is reported as timed out')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Re-run the rules on a report or snapshot saved by `--format json` (`-` for stdin); no probing')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (the default), always or never')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Read this configuration file after the system''s and the user''s (also GPUDOCTOR_CONFIG)')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Show every library bound, not only the CUDA libraries and the failures')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Shorthand for --format json')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no report: only the exit code says the outcome')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no report: only the exit code says the outcome')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail (each command says which in its own help)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail (each command says which in its own help)')
            [CompletionResult]::new('--no-config', '--no-config', [CompletionResultType]::ParameterName, 'Read no configuration file and no GPUDOCTOR_* policy variable')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'gpudoctor;devices' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--fail-on', '--fail-on', [CompletionResultType]::ParameterName, 'Exit 1 when a finding at or above this severity exists [default: error]')
            [CompletionResult]::new('--only', '--only', [CompletionResultType]::ParameterName, 'Run only these probes and/or report only these codes (comma-separated)')
            [CompletionResult]::new('--skip', '--skip', [CompletionResultType]::ParameterName, 'Skip these probes and/or codes (comma-separated)')
            [CompletionResult]::new('--root', '--root', [CompletionResultType]::ParameterName, 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Overall time budget in seconds (default 5); a probe still running then is reported as timed out')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Re-run the rules on a report or snapshot saved by `--format json` (`-` for stdin); no probing')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'Judge device-node access for this user (name or uid) instead of the caller')
            [CompletionResult]::new('--nvml-lib', '--nvml-lib', [CompletionResultType]::ParameterName, 'Load NVML from this file instead of the loader''s libnvidia-ml.so.1 (also GPUDOCTOR_NVML_LIB); never from inside --root')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (the default), always or never')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Read this configuration file after the system''s and the user''s (also GPUDOCTOR_CONFIG)')
            [CompletionResult]::new('--detail', '--detail', [CompletionResultType]::ParameterName, 'Show everything about every GPU')
            [CompletionResult]::new('--wide', '--wide', [CompletionResultType]::ParameterName, 'Show every column of the table, however wide')
            [CompletionResult]::new('--topo', '--topo', [CompletionResultType]::ParameterName, 'Show how the GPUs connect: a link matrix like `nvidia-smi topo -m`, with NUMA and CPU affinity, RDMA NICs and the IOMMU')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Shorthand for --format json')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no report: only the exit code says the outcome')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no report: only the exit code says the outcome')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail (each command says which in its own help)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail (each command says which in its own help)')
            [CompletionResult]::new('--no-config', '--no-config', [CompletionResultType]::ParameterName, 'Read no configuration file and no GPUDOCTOR_* policy variable')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'gpudoctor;smoke' {
            [CompletionResult]::new('--device', '--device', [CompletionResultType]::ParameterName, 'Only this GPU: its CUDA ordinal (after CUDA_VISIBLE_DEVICES), UUID (or a unique prefix) or PCI bus id; default: every visible GPU at once')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--fail-on', '--fail-on', [CompletionResultType]::ParameterName, 'Exit 1 when a finding at or above this severity exists [default: error]')
            [CompletionResult]::new('--only', '--only', [CompletionResultType]::ParameterName, 'Run only these probes and/or report only these codes (comma-separated)')
            [CompletionResult]::new('--skip', '--skip', [CompletionResultType]::ParameterName, 'Skip these probes and/or codes (comma-separated)')
            [CompletionResult]::new('--root', '--root', [CompletionResultType]::ParameterName, 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'How long the driver may go without answering, in seconds (default 30; 60 with --nccl), before a GPU is reported as hung; a slow GPU that keeps answering runs to its end')
            [CompletionResult]::new('--nvml-lib', '--nvml-lib', [CompletionResultType]::ParameterName, 'Load NVML from this file instead of the loader''s libnvidia-ml.so.1 (also GPUDOCTOR_NVML_LIB); never from inside --root')
            [CompletionResult]::new('--cuda-lib', '--cuda-lib', [CompletionResultType]::ParameterName, 'Load libcuda from this file instead of the loader''s libcuda.so.1 for the smoke test (also GPUDOCTOR_CUDA_LIB); never from inside --root')
            [CompletionResult]::new('--matmul-size', '--matmul-size', [CompletionResultType]::ParameterName, 'Smoke test: N of the N×N FP32 matmul (16–8192) [default: 1024]')
            [CompletionResult]::new('--mem-fraction', '--mem-fraction', [CompletionResultType]::ParameterName, 'Smoke test: share of the free GPU memory the allocation probe fills (0.01–0.95; at most 0.5 where other processes use the GPU) [default: 0.9]')
            [CompletionResult]::new('--transfer-size', '--transfer-size', [CompletionResultType]::ParameterName, 'Smoke test: MiB per host↔device copy in the bandwidth test, per GPU↔GPU peer copy (up to 64), and per GPU in --nccl''s all-reduce (1–4096) [default: 256]')
            [CompletionResult]::new('--nccl-lib', '--nccl-lib', [CompletionResultType]::ParameterName, 'With --nccl: load this libnccl instead of the one the loader gives torch (also GPUDOCTOR_NCCL_LIB); never from inside --root')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (the default), always or never')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Read this configuration file after the system''s and the user''s (also GPUDOCTOR_CONFIG)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Shorthand for --format json')
            [CompletionResult]::new('--nccl', '--nccl', [CompletionResultType]::ParameterName, 'Smoke test: also run an NCCL all-reduce over every tested GPU (checked, timed, transports named)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no report: only the exit code says the outcome')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no report: only the exit code says the outcome')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail (each command says which in its own help)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail (each command says which in its own help)')
            [CompletionResult]::new('--no-config', '--no-config', [CompletionResultType]::ParameterName, 'Read no configuration file and no GPUDOCTOR_* policy variable')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'gpudoctor;recommend' {
            [CompletionResult]::new('--driver', '--driver', [CompletionResultType]::ParameterName, 'Answer for this NVIDIA driver version (e.g. 550.54.15) instead of the installed one')
            [CompletionResult]::new('--gpu', '--gpu', [CompletionResultType]::ParameterName, 'Answer for these GPUs: compute capabilities (sm_120, 9.0) or names (RTX 5090), comma-separated')
            [CompletionResult]::new('--python', '--python', [CompletionResultType]::ParameterName, 'The Python: a version (3.12), or the interpreter whose environment to inspect')
            [CompletionResult]::new('--platform', '--platform', [CompletionResultType]::ParameterName, 'The CPU architecture to answer for (x86_64, aarch64)')
            [CompletionResult]::new('--installer', '--installer', [CompletionResultType]::ParameterName, 'The installer whose commands to print [default: the one that manages the environment, else pip]')
            [CompletionResult]::new('--cuda', '--cuda', [CompletionResultType]::ParameterName, 'The CUDA wanted: a major (12) or major.minor (12.8, cu128)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--root', '--root', [CompletionResultType]::ParameterName, 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Overall time budget in seconds (default 5); a probe still running then is reported as timed out')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Re-run the rules on a report or snapshot saved by `--format json` (`-` for stdin); no probing')
            [CompletionResult]::new('--nvml-lib', '--nvml-lib', [CompletionResultType]::ParameterName, 'Load NVML from this file instead of the loader''s libnvidia-ml.so.1 (also GPUDOCTOR_NVML_LIB); never from inside --root')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (the default), always or never')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Read this configuration file after the system''s and the user''s (also GPUDOCTOR_CONFIG)')
            [CompletionResult]::new('--fresh', '--fresh', [CompletionResultType]::ParameterName, 'Answer for a new environment: ignore what the current one has installed')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Shorthand for --format json')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no report: only the exit code says the outcome')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no report: only the exit code says the outcome')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail: every version considered for each pick')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail: every version considered for each pick')
            [CompletionResult]::new('--no-config', '--no-config', [CompletionResultType]::ParameterName, 'Read no configuration file and no GPUDOCTOR_* policy variable')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'gpudoctor;fleet' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--fail-on', '--fail-on', [CompletionResultType]::ParameterName, 'Exit 1 when a finding at or above this severity exists [default: error]')
            [CompletionResult]::new('--only', '--only', [CompletionResultType]::ParameterName, 'Run only these probes and/or report only these codes (comma-separated)')
            [CompletionResult]::new('--skip', '--skip', [CompletionResultType]::ParameterName, 'Skip these probes and/or codes (comma-separated)')
            [CompletionResult]::new('--expect-gpus', '--expect-gpus', [CompletionResultType]::ParameterName, 'Expect N GPUs on each node: fewer is an error (GD087) naming the missing ones (also gpus_per_node in the configuration, GPUDOCTOR_EXPECT_GPUS)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (the default), always or never')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Read this configuration file after the system''s and the user''s (also GPUDOCTOR_CONFIG)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Shorthand for --format json')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no report: only the exit code says the outcome')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no report: only the exit code says the outcome')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail (each command says which in its own help)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail (each command says which in its own help)')
            [CompletionResult]::new('--no-config', '--no-config', [CompletionResultType]::ParameterName, 'Read no configuration file and no GPUDOCTOR_* policy variable')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'gpudoctor;diff' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--fail-on', '--fail-on', [CompletionResultType]::ParameterName, 'Exit 1 only when a finding at or above this severity appeared or got worse (without it: when anything differs, as diff(1))')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (the default), always or never')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Read this configuration file after the system''s and the user''s (also GPUDOCTOR_CONFIG)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Shorthand for --format json')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no report: only the exit code says the outcome')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no report: only the exit code says the outcome')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail (each command says which in its own help)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail (each command says which in its own help)')
            [CompletionResult]::new('--no-config', '--no-config', [CompletionResultType]::ParameterName, 'Read no configuration file and no GPUDOCTOR_* policy variable')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'gpudoctor;explain' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (the default), always or never')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Read this configuration file after the system''s and the user''s (also GPUDOCTOR_CONFIG)')
            [CompletionResult]::new('--list', '--list', [CompletionResultType]::ParameterName, 'List every code with its one-line title')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Shorthand for --format json')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no report: only the exit code says the outcome')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no report: only the exit code says the outcome')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail (each command says which in its own help)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail (each command says which in its own help)')
            [CompletionResult]::new('--no-config', '--no-config', [CompletionResultType]::ParameterName, 'Read no configuration file and no GPUDOCTOR_* policy variable')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'gpudoctor;config' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (the default), always or never')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Read this configuration file after the system''s and the user''s (also GPUDOCTOR_CONFIG)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Shorthand for --format json')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no report: only the exit code says the outcome')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no report: only the exit code says the outcome')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail (each command says which in its own help)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail (each command says which in its own help)')
            [CompletionResult]::new('--no-config', '--no-config', [CompletionResultType]::ParameterName, 'Read no configuration file and no GPUDOCTOR_* policy variable')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'gpudoctor;schema' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (the default), always or never')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Read this configuration file after the system''s and the user''s (also GPUDOCTOR_CONFIG)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no report: only the exit code says the outcome')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no report: only the exit code says the outcome')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail (each command says which in its own help)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail (each command says which in its own help)')
            [CompletionResult]::new('--no-config', '--no-config', [CompletionResultType]::ParameterName, 'Read no configuration file and no GPUDOCTOR_* policy variable')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'gpudoctor;bundle' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Where to write the archive (default ./gpudoctor-bundle.tar.gz)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Where to write the archive (default ./gpudoctor-bundle.tar.gz)')
            [CompletionResult]::new('--python', '--python', [CompletionResultType]::ParameterName, 'The Python interpreter whose environment to inspect')
            [CompletionResult]::new('--cuda-lib', '--cuda-lib', [CompletionResultType]::ParameterName, 'Load libcuda from this file for the smoke test')
            [CompletionResult]::new('--root', '--root', [CompletionResultType]::ParameterName, 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Overall time budget in seconds (default 5); a probe still running then is reported as timed out')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'Judge device-node access for this user (name or uid) instead of the caller')
            [CompletionResult]::new('--nvml-lib', '--nvml-lib', [CompletionResultType]::ParameterName, 'Load NVML from this file instead of the loader''s libnvidia-ml.so.1 (also GPUDOCTOR_NVML_LIB); never from inside --root')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (the default), always or never')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Read this configuration file after the system''s and the user''s (also GPUDOCTOR_CONFIG)')
            [CompletionResult]::new('--smoke', '--smoke', [CompletionResultType]::ParameterName, 'Also run the on-device smoke test and include its result')
            [CompletionResult]::new('--no-redact', '--no-redact', [CompletionResultType]::ParameterName, 'Keep host names, user names, addresses and token-looking strings (they are replaced by placeholders by default)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no report: only the exit code says the outcome')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no report: only the exit code says the outcome')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail (each command says which in its own help)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail (each command says which in its own help)')
            [CompletionResult]::new('--no-config', '--no-config', [CompletionResultType]::ParameterName, 'Read no configuration file and no GPUDOCTOR_* policy variable')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'gpudoctor;mcp' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (the default), always or never')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Read this configuration file after the system''s and the user''s (also GPUDOCTOR_CONFIG)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no report: only the exit code says the outcome')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no report: only the exit code says the outcome')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail (each command says which in its own help)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail (each command says which in its own help)')
            [CompletionResult]::new('--no-config', '--no-config', [CompletionResultType]::ParameterName, 'Read no configuration file and no GPUDOCTOR_* policy variable')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'gpudoctor;completions' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (the default), always or never')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Read this configuration file after the system''s and the user''s (also GPUDOCTOR_CONFIG)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no report: only the exit code says the outcome')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no report: only the exit code says the outcome')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail (each command says which in its own help)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail (each command says which in its own help)')
            [CompletionResult]::new('--no-config', '--no-config', [CompletionResultType]::ParameterName, 'Read no configuration file and no GPUDOCTOR_* policy variable')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'gpudoctor;man' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (the default), always or never')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Read this configuration file after the system''s and the user''s (also GPUDOCTOR_CONFIG)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no report: only the exit code says the outcome')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no report: only the exit code says the outcome')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'More detail (each command says which in its own help)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'More detail (each command says which in its own help)')
            [CompletionResult]::new('--no-config', '--no-config', [CompletionResultType]::ParameterName, 'Read no configuration file and no GPUDOCTOR_* policy variable')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'gpudoctor;help' {
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Run every probe and rule and print the report (the default)')
            [CompletionResult]::new('toolkit', 'toolkit', [CompletionResultType]::ParameterValue, 'Every CUDA toolkit, and which one nvcc and the loader pick')
            [CompletionResult]::new('libs', 'libs', [CompletionResultType]::ParameterValue, 'What the loader binds for each CUDA module, and whether it loads')
            [CompletionResult]::new('devices', 'devices', [CompletionResultType]::ParameterValue, 'The GPUs as NVML sees them, or everything about one of them')
            [CompletionResult]::new('smoke', 'smoke', [CompletionResultType]::ParameterValue, 'Prove the GPUs compute: matmul, memory, transfer bandwidth')
            [CompletionResult]::new('recommend', 'recommend', [CompletionResultType]::ParameterValue, 'What to install (torch, jax, vllm, …), and why')
            [CompletionResult]::new('fleet', 'fleet', [CompletionResultType]::ParameterValue, 'Node reports together: the fleet''s shape, outliers, findings')
            [CompletionResult]::new('diff', 'diff', [CompletionResultType]::ParameterValue, 'The facts and findings that differ between two saved reports')
            [CompletionResult]::new('explain', 'explain', [CompletionResultType]::ParameterValue, 'Explain a finding code (GD012, gd012 or 12), or list every code')
            [CompletionResult]::new('config', 'config', [CompletionResultType]::ParameterValue, 'Print the effective configuration and where each value came from')
            [CompletionResult]::new('schema', 'schema', [CompletionResultType]::ParameterValue, 'Print the JSON Schema of the report `check --format json` prints')
            [CompletionResult]::new('bundle', 'bundle', [CompletionResultType]::ParameterValue, 'Pack a redacted support bundle for a bug report')
            [CompletionResult]::new('mcp', 'mcp', [CompletionResultType]::ParameterValue, 'Serve the read-only commands to AI assistants over MCP (stdio)')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print the shell completion script for SHELL')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print the manual page (roff), e.g. `gpudoctor man | man -l -`')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'gpudoctor;help;check' {
            break
        }
        'gpudoctor;help;toolkit' {
            break
        }
        'gpudoctor;help;libs' {
            break
        }
        'gpudoctor;help;devices' {
            break
        }
        'gpudoctor;help;smoke' {
            break
        }
        'gpudoctor;help;recommend' {
            break
        }
        'gpudoctor;help;fleet' {
            break
        }
        'gpudoctor;help;diff' {
            break
        }
        'gpudoctor;help;explain' {
            break
        }
        'gpudoctor;help;config' {
            break
        }
        'gpudoctor;help;schema' {
            break
        }
        'gpudoctor;help;bundle' {
            break
        }
        'gpudoctor;help;mcp' {
            break
        }
        'gpudoctor;help;completions' {
            break
        }
        'gpudoctor;help;man' {
            break
        }
        'gpudoctor;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
