# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_gpudoctor_global_optspecs
    string join \n format= json color= root= timeout= fail-on= v/verbose only= skip= from= user= nvml-lib= python= python-import cuda-lib= no-smoke quick output= matmul-size= mem-fraction= transfer-size= h/help V/version
end

function __fish_gpudoctor_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_gpudoctor_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_gpudoctor_using_subcommand
    set -l cmd (__fish_gpudoctor_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -l format -d 'Output format' -r -f -a "human\t'The report for a terminal'
json\t'The JSON report (a stable contract)'
markdown\t'The report as Markdown, for an issue or a CI step summary'
junit\t'JUnit XML, one testcase per check (check only)'
prometheus\t'Prometheus text format for the node_exporter textfile collector (check only)'"
complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -l color -d 'Colour: auto honours NO_COLOR, CLICOLOR_FORCE and whether stdout is a terminal' -r -f -a "auto\t''
always\t''
never\t''"
complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -l root -d 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -l timeout -d 'Overall time budget in seconds (default 5; 60 with --python-import); a probe still running then is reported as timed out' -r
complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -l fail-on -d 'Exit 1 when a finding at or above this severity exists' -r -f -a "error\t''
warning\t''
never\t''"
complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -l only -d 'Run only these probes and/or report only these codes (comma-separated)' -r
complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -l skip -d 'Skip these probes and/or codes (comma-separated)' -r
complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -l from -d 'Re-run the rules on a report or snapshot saved by `--format json` (`-` for stdin); no probing' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -l user -d 'Judge device-node access for this user (name or uid) instead of the caller' -r
complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -l nvml-lib -d 'Load NVML from this file instead of the loader\'s libnvidia-ml.so.1 (also GPUDOCTOR_NVML_LIB); never from inside --root' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -l python -d 'The Python interpreter whose environment to inspect first (default: python3 on PATH, VIRTUAL_ENV, CONDA_PREFIX, ./.venv)' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -l cuda-lib -d 'Load libcuda from this file instead of the loader\'s libcuda.so.1 for the smoke test (also GPUDOCTOR_CUDA_LIB); never from inside --root' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -l output -d 'Also write the report (in --format) to PATH, `{host}` replaced by the node\'s name; stdout gets the human report' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -l matmul-size -d 'Smoke test: N of the N×N FP32 matmul (16–8192)' -r
complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -l mem-fraction -d 'Smoke test: share of the free GPU memory the allocation probe fills (0.01–0.95; at most 0.5 where other processes use the GPU)' -r
complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -l transfer-size -d 'Smoke test: MiB per host↔device copy in the bandwidth test (1–4096)' -r
complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -l json -d 'Shorthand for --format json'
complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -s v -l verbose -d 'Also show passing checks, every fact\'s source, and all registered variables'
complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -l python-import -d 'Also import torch in that interpreter (never under --root) and compare its answers; raises --timeout to at least 60 s'
complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -l no-smoke -d '`check` without the on-device smoke test'
complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -l quick -d 'A quick static check: no smoke test (same as --no-smoke)'
complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -s V -l version -d 'Print version'
complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -f -a "check" -d 'Run every probe and rule and print the report (the default)'
complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -f -a "explain" -d 'Explain a finding code (GD012, gd012 or 12), or list every code'
complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -f -a "toolkit" -d 'Show every CUDA toolkit, which one nvcc / CUDA_HOME / the loader picks, and the CUDA libraries in the loader\'s order'
complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -f -a "devices" -d 'The GPUs as NVML sees them: a table, or everything about GPU N / all (--detail)'
complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -f -a "smoke" -d 'Prove the GPUs compute: FP32 matmul checked against the CPU, a memory-allocation probe, transfer bandwidth'
complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -f -a "fleet" -d 'Aggregate node reports (`check --format json`): the fleet\'s shape, outlier nodes, findings by code across nodes'
complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -f -a "schema" -d 'Print the JSON Schema of the report `check --format json` prints'
complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -f -a "__nvml-worker" -d 'Internal: load NVML in this child process and print its facts as JSON'
complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -f -a "__smoke-worker" -d 'Internal: run the smoke test in this child process and stream its results as JSON lines'
complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -f -a "completions" -d 'Print the shell completion script for SHELL'
complete -c gpudoctor -n "__fish_gpudoctor_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand check" -l format -d 'Output format' -r -f -a "human\t'The report for a terminal'
json\t'The JSON report (a stable contract)'
markdown\t'The report as Markdown, for an issue or a CI step summary'
junit\t'JUnit XML, one testcase per check (check only)'
prometheus\t'Prometheus text format for the node_exporter textfile collector (check only)'"
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand check" -l color -d 'Colour: auto honours NO_COLOR, CLICOLOR_FORCE and whether stdout is a terminal' -r -f -a "auto\t''
always\t''
never\t''"
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand check" -l root -d 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand check" -l timeout -d 'Overall time budget in seconds (default 5; 60 with --python-import); a probe still running then is reported as timed out' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand check" -l fail-on -d 'Exit 1 when a finding at or above this severity exists' -r -f -a "error\t''
warning\t''
never\t''"
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand check" -l only -d 'Run only these probes and/or report only these codes (comma-separated)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand check" -l skip -d 'Skip these probes and/or codes (comma-separated)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand check" -l from -d 'Re-run the rules on a report or snapshot saved by `--format json` (`-` for stdin); no probing' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand check" -l user -d 'Judge device-node access for this user (name or uid) instead of the caller' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand check" -l nvml-lib -d 'Load NVML from this file instead of the loader\'s libnvidia-ml.so.1 (also GPUDOCTOR_NVML_LIB); never from inside --root' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand check" -l python -d 'The Python interpreter whose environment to inspect first (default: python3 on PATH, VIRTUAL_ENV, CONDA_PREFIX, ./.venv)' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand check" -l cuda-lib -d 'Load libcuda from this file instead of the loader\'s libcuda.so.1 for the smoke test (also GPUDOCTOR_CUDA_LIB); never from inside --root' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand check" -l output -d 'Also write the report (in --format) to PATH, `{host}` replaced by the node\'s name; stdout gets the human report' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand check" -l matmul-size -d 'Smoke test: N of the N×N FP32 matmul (16–8192)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand check" -l mem-fraction -d 'Smoke test: share of the free GPU memory the allocation probe fills (0.01–0.95; at most 0.5 where other processes use the GPU)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand check" -l transfer-size -d 'Smoke test: MiB per host↔device copy in the bandwidth test (1–4096)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand check" -l json -d 'Shorthand for --format json'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand check" -s v -l verbose -d 'Also show passing checks, every fact\'s source, and all registered variables'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand check" -l python-import -d 'Also import torch in that interpreter (never under --root) and compare its answers; raises --timeout to at least 60 s'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand check" -l no-smoke -d '`check` without the on-device smoke test'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand check" -l quick -d 'A quick static check: no smoke test (same as --no-smoke)'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand check" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand explain" -l format -d 'Output format' -r -f -a "human\t'The report for a terminal'
json\t'The JSON report (a stable contract)'
markdown\t'The report as Markdown, for an issue or a CI step summary'
junit\t'JUnit XML, one testcase per check (check only)'
prometheus\t'Prometheus text format for the node_exporter textfile collector (check only)'"
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand explain" -l color -d 'Colour: auto honours NO_COLOR, CLICOLOR_FORCE and whether stdout is a terminal' -r -f -a "auto\t''
always\t''
never\t''"
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand explain" -l root -d 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand explain" -l timeout -d 'Overall time budget in seconds (default 5; 60 with --python-import); a probe still running then is reported as timed out' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand explain" -l fail-on -d 'Exit 1 when a finding at or above this severity exists' -r -f -a "error\t''
warning\t''
never\t''"
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand explain" -l only -d 'Run only these probes and/or report only these codes (comma-separated)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand explain" -l skip -d 'Skip these probes and/or codes (comma-separated)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand explain" -l from -d 'Re-run the rules on a report or snapshot saved by `--format json` (`-` for stdin); no probing' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand explain" -l user -d 'Judge device-node access for this user (name or uid) instead of the caller' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand explain" -l nvml-lib -d 'Load NVML from this file instead of the loader\'s libnvidia-ml.so.1 (also GPUDOCTOR_NVML_LIB); never from inside --root' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand explain" -l python -d 'The Python interpreter whose environment to inspect first (default: python3 on PATH, VIRTUAL_ENV, CONDA_PREFIX, ./.venv)' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand explain" -l cuda-lib -d 'Load libcuda from this file instead of the loader\'s libcuda.so.1 for the smoke test (also GPUDOCTOR_CUDA_LIB); never from inside --root' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand explain" -l output -d 'Also write the report (in --format) to PATH, `{host}` replaced by the node\'s name; stdout gets the human report' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand explain" -l matmul-size -d 'Smoke test: N of the N×N FP32 matmul (16–8192)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand explain" -l mem-fraction -d 'Smoke test: share of the free GPU memory the allocation probe fills (0.01–0.95; at most 0.5 where other processes use the GPU)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand explain" -l transfer-size -d 'Smoke test: MiB per host↔device copy in the bandwidth test (1–4096)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand explain" -l list -d 'List every code with its one-line title'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand explain" -l json -d 'Shorthand for --format json'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand explain" -s v -l verbose -d 'Also show passing checks, every fact\'s source, and all registered variables'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand explain" -l python-import -d 'Also import torch in that interpreter (never under --root) and compare its answers; raises --timeout to at least 60 s'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand explain" -l no-smoke -d '`check` without the on-device smoke test'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand explain" -l quick -d 'A quick static check: no smoke test (same as --no-smoke)'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand explain" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand toolkit" -l format -d 'Output format' -r -f -a "human\t'The report for a terminal'
json\t'The JSON report (a stable contract)'
markdown\t'The report as Markdown, for an issue or a CI step summary'
junit\t'JUnit XML, one testcase per check (check only)'
prometheus\t'Prometheus text format for the node_exporter textfile collector (check only)'"
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand toolkit" -l color -d 'Colour: auto honours NO_COLOR, CLICOLOR_FORCE and whether stdout is a terminal' -r -f -a "auto\t''
always\t''
never\t''"
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand toolkit" -l root -d 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand toolkit" -l timeout -d 'Overall time budget in seconds (default 5; 60 with --python-import); a probe still running then is reported as timed out' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand toolkit" -l fail-on -d 'Exit 1 when a finding at or above this severity exists' -r -f -a "error\t''
warning\t''
never\t''"
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand toolkit" -l only -d 'Run only these probes and/or report only these codes (comma-separated)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand toolkit" -l skip -d 'Skip these probes and/or codes (comma-separated)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand toolkit" -l from -d 'Re-run the rules on a report or snapshot saved by `--format json` (`-` for stdin); no probing' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand toolkit" -l user -d 'Judge device-node access for this user (name or uid) instead of the caller' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand toolkit" -l nvml-lib -d 'Load NVML from this file instead of the loader\'s libnvidia-ml.so.1 (also GPUDOCTOR_NVML_LIB); never from inside --root' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand toolkit" -l python -d 'The Python interpreter whose environment to inspect first (default: python3 on PATH, VIRTUAL_ENV, CONDA_PREFIX, ./.venv)' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand toolkit" -l cuda-lib -d 'Load libcuda from this file instead of the loader\'s libcuda.so.1 for the smoke test (also GPUDOCTOR_CUDA_LIB); never from inside --root' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand toolkit" -l output -d 'Also write the report (in --format) to PATH, `{host}` replaced by the node\'s name; stdout gets the human report' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand toolkit" -l matmul-size -d 'Smoke test: N of the N×N FP32 matmul (16–8192)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand toolkit" -l mem-fraction -d 'Smoke test: share of the free GPU memory the allocation probe fills (0.01–0.95; at most 0.5 where other processes use the GPU)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand toolkit" -l transfer-size -d 'Smoke test: MiB per host↔device copy in the bandwidth test (1–4096)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand toolkit" -l json -d 'Shorthand for --format json'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand toolkit" -s v -l verbose -d 'Also show passing checks, every fact\'s source, and all registered variables'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand toolkit" -l python-import -d 'Also import torch in that interpreter (never under --root) and compare its answers; raises --timeout to at least 60 s'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand toolkit" -l no-smoke -d '`check` without the on-device smoke test'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand toolkit" -l quick -d 'A quick static check: no smoke test (same as --no-smoke)'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand toolkit" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand devices" -l format -d 'Output format' -r -f -a "human\t'The report for a terminal'
json\t'The JSON report (a stable contract)'
markdown\t'The report as Markdown, for an issue or a CI step summary'
junit\t'JUnit XML, one testcase per check (check only)'
prometheus\t'Prometheus text format for the node_exporter textfile collector (check only)'"
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand devices" -l color -d 'Colour: auto honours NO_COLOR, CLICOLOR_FORCE and whether stdout is a terminal' -r -f -a "auto\t''
always\t''
never\t''"
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand devices" -l root -d 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand devices" -l timeout -d 'Overall time budget in seconds (default 5; 60 with --python-import); a probe still running then is reported as timed out' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand devices" -l fail-on -d 'Exit 1 when a finding at or above this severity exists' -r -f -a "error\t''
warning\t''
never\t''"
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand devices" -l only -d 'Run only these probes and/or report only these codes (comma-separated)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand devices" -l skip -d 'Skip these probes and/or codes (comma-separated)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand devices" -l from -d 'Re-run the rules on a report or snapshot saved by `--format json` (`-` for stdin); no probing' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand devices" -l user -d 'Judge device-node access for this user (name or uid) instead of the caller' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand devices" -l nvml-lib -d 'Load NVML from this file instead of the loader\'s libnvidia-ml.so.1 (also GPUDOCTOR_NVML_LIB); never from inside --root' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand devices" -l python -d 'The Python interpreter whose environment to inspect first (default: python3 on PATH, VIRTUAL_ENV, CONDA_PREFIX, ./.venv)' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand devices" -l cuda-lib -d 'Load libcuda from this file instead of the loader\'s libcuda.so.1 for the smoke test (also GPUDOCTOR_CUDA_LIB); never from inside --root' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand devices" -l output -d 'Also write the report (in --format) to PATH, `{host}` replaced by the node\'s name; stdout gets the human report' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand devices" -l matmul-size -d 'Smoke test: N of the N×N FP32 matmul (16–8192)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand devices" -l mem-fraction -d 'Smoke test: share of the free GPU memory the allocation probe fills (0.01–0.95; at most 0.5 where other processes use the GPU)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand devices" -l transfer-size -d 'Smoke test: MiB per host↔device copy in the bandwidth test (1–4096)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand devices" -l detail -d 'Show everything about every GPU'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand devices" -l json -d 'Shorthand for --format json'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand devices" -s v -l verbose -d 'Also show passing checks, every fact\'s source, and all registered variables'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand devices" -l python-import -d 'Also import torch in that interpreter (never under --root) and compare its answers; raises --timeout to at least 60 s'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand devices" -l no-smoke -d '`check` without the on-device smoke test'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand devices" -l quick -d 'A quick static check: no smoke test (same as --no-smoke)'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand devices" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand smoke" -l device -d 'Only this GPU (CUDA\'s ordinal, after CUDA_VISIBLE_DEVICES); default: every visible GPU at once' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand smoke" -l format -d 'Output format' -r -f -a "human\t'The report for a terminal'
json\t'The JSON report (a stable contract)'
markdown\t'The report as Markdown, for an issue or a CI step summary'
junit\t'JUnit XML, one testcase per check (check only)'
prometheus\t'Prometheus text format for the node_exporter textfile collector (check only)'"
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand smoke" -l color -d 'Colour: auto honours NO_COLOR, CLICOLOR_FORCE and whether stdout is a terminal' -r -f -a "auto\t''
always\t''
never\t''"
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand smoke" -l root -d 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand smoke" -l timeout -d 'Overall time budget in seconds (default 5; 60 with --python-import); a probe still running then is reported as timed out' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand smoke" -l fail-on -d 'Exit 1 when a finding at or above this severity exists' -r -f -a "error\t''
warning\t''
never\t''"
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand smoke" -l only -d 'Run only these probes and/or report only these codes (comma-separated)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand smoke" -l skip -d 'Skip these probes and/or codes (comma-separated)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand smoke" -l from -d 'Re-run the rules on a report or snapshot saved by `--format json` (`-` for stdin); no probing' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand smoke" -l user -d 'Judge device-node access for this user (name or uid) instead of the caller' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand smoke" -l nvml-lib -d 'Load NVML from this file instead of the loader\'s libnvidia-ml.so.1 (also GPUDOCTOR_NVML_LIB); never from inside --root' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand smoke" -l python -d 'The Python interpreter whose environment to inspect first (default: python3 on PATH, VIRTUAL_ENV, CONDA_PREFIX, ./.venv)' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand smoke" -l cuda-lib -d 'Load libcuda from this file instead of the loader\'s libcuda.so.1 for the smoke test (also GPUDOCTOR_CUDA_LIB); never from inside --root' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand smoke" -l output -d 'Also write the report (in --format) to PATH, `{host}` replaced by the node\'s name; stdout gets the human report' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand smoke" -l matmul-size -d 'Smoke test: N of the N×N FP32 matmul (16–8192)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand smoke" -l mem-fraction -d 'Smoke test: share of the free GPU memory the allocation probe fills (0.01–0.95; at most 0.5 where other processes use the GPU)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand smoke" -l transfer-size -d 'Smoke test: MiB per host↔device copy in the bandwidth test (1–4096)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand smoke" -l json -d 'Shorthand for --format json'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand smoke" -s v -l verbose -d 'Also show passing checks, every fact\'s source, and all registered variables'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand smoke" -l python-import -d 'Also import torch in that interpreter (never under --root) and compare its answers; raises --timeout to at least 60 s'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand smoke" -l no-smoke -d '`check` without the on-device smoke test'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand smoke" -l quick -d 'A quick static check: no smoke test (same as --no-smoke)'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand smoke" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand fleet" -l format -d 'Output format' -r -f -a "human\t'The report for a terminal'
json\t'The JSON report (a stable contract)'
markdown\t'The report as Markdown, for an issue or a CI step summary'
junit\t'JUnit XML, one testcase per check (check only)'
prometheus\t'Prometheus text format for the node_exporter textfile collector (check only)'"
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand fleet" -l color -d 'Colour: auto honours NO_COLOR, CLICOLOR_FORCE and whether stdout is a terminal' -r -f -a "auto\t''
always\t''
never\t''"
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand fleet" -l root -d 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand fleet" -l timeout -d 'Overall time budget in seconds (default 5; 60 with --python-import); a probe still running then is reported as timed out' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand fleet" -l fail-on -d 'Exit 1 when a finding at or above this severity exists' -r -f -a "error\t''
warning\t''
never\t''"
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand fleet" -l only -d 'Run only these probes and/or report only these codes (comma-separated)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand fleet" -l skip -d 'Skip these probes and/or codes (comma-separated)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand fleet" -l from -d 'Re-run the rules on a report or snapshot saved by `--format json` (`-` for stdin); no probing' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand fleet" -l user -d 'Judge device-node access for this user (name or uid) instead of the caller' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand fleet" -l nvml-lib -d 'Load NVML from this file instead of the loader\'s libnvidia-ml.so.1 (also GPUDOCTOR_NVML_LIB); never from inside --root' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand fleet" -l python -d 'The Python interpreter whose environment to inspect first (default: python3 on PATH, VIRTUAL_ENV, CONDA_PREFIX, ./.venv)' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand fleet" -l cuda-lib -d 'Load libcuda from this file instead of the loader\'s libcuda.so.1 for the smoke test (also GPUDOCTOR_CUDA_LIB); never from inside --root' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand fleet" -l output -d 'Also write the report (in --format) to PATH, `{host}` replaced by the node\'s name; stdout gets the human report' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand fleet" -l matmul-size -d 'Smoke test: N of the N×N FP32 matmul (16–8192)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand fleet" -l mem-fraction -d 'Smoke test: share of the free GPU memory the allocation probe fills (0.01–0.95; at most 0.5 where other processes use the GPU)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand fleet" -l transfer-size -d 'Smoke test: MiB per host↔device copy in the bandwidth test (1–4096)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand fleet" -l json -d 'Shorthand for --format json'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand fleet" -s v -l verbose -d 'Also show passing checks, every fact\'s source, and all registered variables'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand fleet" -l python-import -d 'Also import torch in that interpreter (never under --root) and compare its answers; raises --timeout to at least 60 s'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand fleet" -l no-smoke -d '`check` without the on-device smoke test'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand fleet" -l quick -d 'A quick static check: no smoke test (same as --no-smoke)'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand fleet" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand schema" -l format -d 'Output format' -r -f -a "human\t'The report for a terminal'
json\t'The JSON report (a stable contract)'
markdown\t'The report as Markdown, for an issue or a CI step summary'
junit\t'JUnit XML, one testcase per check (check only)'
prometheus\t'Prometheus text format for the node_exporter textfile collector (check only)'"
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand schema" -l color -d 'Colour: auto honours NO_COLOR, CLICOLOR_FORCE and whether stdout is a terminal' -r -f -a "auto\t''
always\t''
never\t''"
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand schema" -l root -d 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand schema" -l timeout -d 'Overall time budget in seconds (default 5; 60 with --python-import); a probe still running then is reported as timed out' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand schema" -l fail-on -d 'Exit 1 when a finding at or above this severity exists' -r -f -a "error\t''
warning\t''
never\t''"
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand schema" -l only -d 'Run only these probes and/or report only these codes (comma-separated)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand schema" -l skip -d 'Skip these probes and/or codes (comma-separated)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand schema" -l from -d 'Re-run the rules on a report or snapshot saved by `--format json` (`-` for stdin); no probing' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand schema" -l user -d 'Judge device-node access for this user (name or uid) instead of the caller' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand schema" -l nvml-lib -d 'Load NVML from this file instead of the loader\'s libnvidia-ml.so.1 (also GPUDOCTOR_NVML_LIB); never from inside --root' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand schema" -l python -d 'The Python interpreter whose environment to inspect first (default: python3 on PATH, VIRTUAL_ENV, CONDA_PREFIX, ./.venv)' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand schema" -l cuda-lib -d 'Load libcuda from this file instead of the loader\'s libcuda.so.1 for the smoke test (also GPUDOCTOR_CUDA_LIB); never from inside --root' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand schema" -l output -d 'Also write the report (in --format) to PATH, `{host}` replaced by the node\'s name; stdout gets the human report' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand schema" -l matmul-size -d 'Smoke test: N of the N×N FP32 matmul (16–8192)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand schema" -l mem-fraction -d 'Smoke test: share of the free GPU memory the allocation probe fills (0.01–0.95; at most 0.5 where other processes use the GPU)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand schema" -l transfer-size -d 'Smoke test: MiB per host↔device copy in the bandwidth test (1–4096)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand schema" -l json -d 'Shorthand for --format json'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand schema" -s v -l verbose -d 'Also show passing checks, every fact\'s source, and all registered variables'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand schema" -l python-import -d 'Also import torch in that interpreter (never under --root) and compare its answers; raises --timeout to at least 60 s'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand schema" -l no-smoke -d '`check` without the on-device smoke test'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand schema" -l quick -d 'A quick static check: no smoke test (same as --no-smoke)'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand schema" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __nvml-worker" -l lib -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __nvml-worker" -l format -d 'Output format' -r -f -a "human\t'The report for a terminal'
json\t'The JSON report (a stable contract)'
markdown\t'The report as Markdown, for an issue or a CI step summary'
junit\t'JUnit XML, one testcase per check (check only)'
prometheus\t'Prometheus text format for the node_exporter textfile collector (check only)'"
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __nvml-worker" -l color -d 'Colour: auto honours NO_COLOR, CLICOLOR_FORCE and whether stdout is a terminal' -r -f -a "auto\t''
always\t''
never\t''"
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __nvml-worker" -l root -d 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __nvml-worker" -l timeout -d 'Overall time budget in seconds (default 5; 60 with --python-import); a probe still running then is reported as timed out' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __nvml-worker" -l fail-on -d 'Exit 1 when a finding at or above this severity exists' -r -f -a "error\t''
warning\t''
never\t''"
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __nvml-worker" -l only -d 'Run only these probes and/or report only these codes (comma-separated)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __nvml-worker" -l skip -d 'Skip these probes and/or codes (comma-separated)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __nvml-worker" -l from -d 'Re-run the rules on a report or snapshot saved by `--format json` (`-` for stdin); no probing' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __nvml-worker" -l user -d 'Judge device-node access for this user (name or uid) instead of the caller' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __nvml-worker" -l nvml-lib -d 'Load NVML from this file instead of the loader\'s libnvidia-ml.so.1 (also GPUDOCTOR_NVML_LIB); never from inside --root' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __nvml-worker" -l python -d 'The Python interpreter whose environment to inspect first (default: python3 on PATH, VIRTUAL_ENV, CONDA_PREFIX, ./.venv)' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __nvml-worker" -l cuda-lib -d 'Load libcuda from this file instead of the loader\'s libcuda.so.1 for the smoke test (also GPUDOCTOR_CUDA_LIB); never from inside --root' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __nvml-worker" -l output -d 'Also write the report (in --format) to PATH, `{host}` replaced by the node\'s name; stdout gets the human report' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __nvml-worker" -l matmul-size -d 'Smoke test: N of the N×N FP32 matmul (16–8192)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __nvml-worker" -l mem-fraction -d 'Smoke test: share of the free GPU memory the allocation probe fills (0.01–0.95; at most 0.5 where other processes use the GPU)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __nvml-worker" -l transfer-size -d 'Smoke test: MiB per host↔device copy in the bandwidth test (1–4096)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __nvml-worker" -l json -d 'Shorthand for --format json'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __nvml-worker" -s v -l verbose -d 'Also show passing checks, every fact\'s source, and all registered variables'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __nvml-worker" -l python-import -d 'Also import torch in that interpreter (never under --root) and compare its answers; raises --timeout to at least 60 s'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __nvml-worker" -l no-smoke -d '`check` without the on-device smoke test'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __nvml-worker" -l quick -d 'A quick static check: no smoke test (same as --no-smoke)'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __nvml-worker" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __smoke-worker" -l lib -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __smoke-worker" -l device -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __smoke-worker" -l matmul-size -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __smoke-worker" -l mem-fraction -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __smoke-worker" -l transfer-bytes -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __smoke-worker" -l shared-gpu -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __smoke-worker" -l format -d 'Output format' -r -f -a "human\t'The report for a terminal'
json\t'The JSON report (a stable contract)'
markdown\t'The report as Markdown, for an issue or a CI step summary'
junit\t'JUnit XML, one testcase per check (check only)'
prometheus\t'Prometheus text format for the node_exporter textfile collector (check only)'"
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __smoke-worker" -l color -d 'Colour: auto honours NO_COLOR, CLICOLOR_FORCE and whether stdout is a terminal' -r -f -a "auto\t''
always\t''
never\t''"
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __smoke-worker" -l root -d 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __smoke-worker" -l timeout -d 'Overall time budget in seconds (default 5; 60 with --python-import); a probe still running then is reported as timed out' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __smoke-worker" -l fail-on -d 'Exit 1 when a finding at or above this severity exists' -r -f -a "error\t''
warning\t''
never\t''"
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __smoke-worker" -l only -d 'Run only these probes and/or report only these codes (comma-separated)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __smoke-worker" -l skip -d 'Skip these probes and/or codes (comma-separated)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __smoke-worker" -l from -d 'Re-run the rules on a report or snapshot saved by `--format json` (`-` for stdin); no probing' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __smoke-worker" -l user -d 'Judge device-node access for this user (name or uid) instead of the caller' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __smoke-worker" -l nvml-lib -d 'Load NVML from this file instead of the loader\'s libnvidia-ml.so.1 (also GPUDOCTOR_NVML_LIB); never from inside --root' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __smoke-worker" -l python -d 'The Python interpreter whose environment to inspect first (default: python3 on PATH, VIRTUAL_ENV, CONDA_PREFIX, ./.venv)' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __smoke-worker" -l cuda-lib -d 'Load libcuda from this file instead of the loader\'s libcuda.so.1 for the smoke test (also GPUDOCTOR_CUDA_LIB); never from inside --root' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __smoke-worker" -l output -d 'Also write the report (in --format) to PATH, `{host}` replaced by the node\'s name; stdout gets the human report' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __smoke-worker" -l transfer-size -d 'Smoke test: MiB per host↔device copy in the bandwidth test (1–4096)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __smoke-worker" -l json -d 'Shorthand for --format json'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __smoke-worker" -s v -l verbose -d 'Also show passing checks, every fact\'s source, and all registered variables'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __smoke-worker" -l python-import -d 'Also import torch in that interpreter (never under --root) and compare its answers; raises --timeout to at least 60 s'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __smoke-worker" -l no-smoke -d '`check` without the on-device smoke test'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __smoke-worker" -l quick -d 'A quick static check: no smoke test (same as --no-smoke)'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand __smoke-worker" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand completions" -l format -d 'Output format' -r -f -a "human\t'The report for a terminal'
json\t'The JSON report (a stable contract)'
markdown\t'The report as Markdown, for an issue or a CI step summary'
junit\t'JUnit XML, one testcase per check (check only)'
prometheus\t'Prometheus text format for the node_exporter textfile collector (check only)'"
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand completions" -l color -d 'Colour: auto honours NO_COLOR, CLICOLOR_FORCE and whether stdout is a terminal' -r -f -a "auto\t''
always\t''
never\t''"
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand completions" -l root -d 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand completions" -l timeout -d 'Overall time budget in seconds (default 5; 60 with --python-import); a probe still running then is reported as timed out' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand completions" -l fail-on -d 'Exit 1 when a finding at or above this severity exists' -r -f -a "error\t''
warning\t''
never\t''"
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand completions" -l only -d 'Run only these probes and/or report only these codes (comma-separated)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand completions" -l skip -d 'Skip these probes and/or codes (comma-separated)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand completions" -l from -d 'Re-run the rules on a report or snapshot saved by `--format json` (`-` for stdin); no probing' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand completions" -l user -d 'Judge device-node access for this user (name or uid) instead of the caller' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand completions" -l nvml-lib -d 'Load NVML from this file instead of the loader\'s libnvidia-ml.so.1 (also GPUDOCTOR_NVML_LIB); never from inside --root' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand completions" -l python -d 'The Python interpreter whose environment to inspect first (default: python3 on PATH, VIRTUAL_ENV, CONDA_PREFIX, ./.venv)' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand completions" -l cuda-lib -d 'Load libcuda from this file instead of the loader\'s libcuda.so.1 for the smoke test (also GPUDOCTOR_CUDA_LIB); never from inside --root' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand completions" -l output -d 'Also write the report (in --format) to PATH, `{host}` replaced by the node\'s name; stdout gets the human report' -r -F
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand completions" -l matmul-size -d 'Smoke test: N of the N×N FP32 matmul (16–8192)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand completions" -l mem-fraction -d 'Smoke test: share of the free GPU memory the allocation probe fills (0.01–0.95; at most 0.5 where other processes use the GPU)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand completions" -l transfer-size -d 'Smoke test: MiB per host↔device copy in the bandwidth test (1–4096)' -r
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand completions" -l json -d 'Shorthand for --format json'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand completions" -s v -l verbose -d 'Also show passing checks, every fact\'s source, and all registered variables'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand completions" -l python-import -d 'Also import torch in that interpreter (never under --root) and compare its answers; raises --timeout to at least 60 s'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand completions" -l no-smoke -d '`check` without the on-device smoke test'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand completions" -l quick -d 'A quick static check: no smoke test (same as --no-smoke)'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand completions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand help; and not __fish_seen_subcommand_from check explain toolkit devices smoke fleet schema __nvml-worker __smoke-worker completions help" -f -a "check" -d 'Run every probe and rule and print the report (the default)'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand help; and not __fish_seen_subcommand_from check explain toolkit devices smoke fleet schema __nvml-worker __smoke-worker completions help" -f -a "explain" -d 'Explain a finding code (GD012, gd012 or 12), or list every code'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand help; and not __fish_seen_subcommand_from check explain toolkit devices smoke fleet schema __nvml-worker __smoke-worker completions help" -f -a "toolkit" -d 'Show every CUDA toolkit, which one nvcc / CUDA_HOME / the loader picks, and the CUDA libraries in the loader\'s order'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand help; and not __fish_seen_subcommand_from check explain toolkit devices smoke fleet schema __nvml-worker __smoke-worker completions help" -f -a "devices" -d 'The GPUs as NVML sees them: a table, or everything about GPU N / all (--detail)'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand help; and not __fish_seen_subcommand_from check explain toolkit devices smoke fleet schema __nvml-worker __smoke-worker completions help" -f -a "smoke" -d 'Prove the GPUs compute: FP32 matmul checked against the CPU, a memory-allocation probe, transfer bandwidth'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand help; and not __fish_seen_subcommand_from check explain toolkit devices smoke fleet schema __nvml-worker __smoke-worker completions help" -f -a "fleet" -d 'Aggregate node reports (`check --format json`): the fleet\'s shape, outlier nodes, findings by code across nodes'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand help; and not __fish_seen_subcommand_from check explain toolkit devices smoke fleet schema __nvml-worker __smoke-worker completions help" -f -a "schema" -d 'Print the JSON Schema of the report `check --format json` prints'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand help; and not __fish_seen_subcommand_from check explain toolkit devices smoke fleet schema __nvml-worker __smoke-worker completions help" -f -a "__nvml-worker" -d 'Internal: load NVML in this child process and print its facts as JSON'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand help; and not __fish_seen_subcommand_from check explain toolkit devices smoke fleet schema __nvml-worker __smoke-worker completions help" -f -a "__smoke-worker" -d 'Internal: run the smoke test in this child process and stream its results as JSON lines'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand help; and not __fish_seen_subcommand_from check explain toolkit devices smoke fleet schema __nvml-worker __smoke-worker completions help" -f -a "completions" -d 'Print the shell completion script for SHELL'
complete -c gpudoctor -n "__fish_gpudoctor_using_subcommand help; and not __fish_seen_subcommand_from check explain toolkit devices smoke fleet schema __nvml-worker __smoke-worker completions help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
