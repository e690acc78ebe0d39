
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
            cand --color 'Colour: auto honours NO_COLOR, CLICOLOR_FORCE and whether stdout is a terminal'
            cand --root 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)'
            cand --timeout 'Overall time budget in seconds (default 5; 60 with --python-import); a probe still running then is reported as timed out'
            cand --fail-on 'Exit 1 when a finding at or above this severity exists'
            cand --only 'Run only these probes and/or report only these codes (comma-separated)'
            cand --skip 'Skip these probes and/or codes (comma-separated)'
            cand --from 'Re-run the rules on a report or snapshot saved by `--format json` (`-` for stdin); no probing'
            cand --user 'Judge device-node access for this user (name or uid) instead of the caller'
            cand --nvml-lib 'Load NVML from this file instead of the loader''s libnvidia-ml.so.1 (also GPUDOCTOR_NVML_LIB); never from inside --root'
            cand --python 'The Python interpreter whose environment to inspect first (default: python3 on PATH, VIRTUAL_ENV, CONDA_PREFIX, ./.venv)'
            cand --json 'Shorthand for --format json'
            cand -v 'Also show passing checks, every fact''s source, and all registered variables'
            cand --verbose 'Also show passing checks, every fact''s source, and all registered variables'
            cand --python-import 'Also import torch in that interpreter (never under --root) and compare its answers; raises --timeout to at least 60 s'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand check 'Run every probe and rule and print the report (the default)'
            cand explain 'Explain a finding code (GD012, gd012 or 12), or list every code'
            cand toolkit 'Show every CUDA toolkit, which one nvcc / CUDA_HOME / the loader picks, and the CUDA libraries in the loader''s order'
            cand devices 'The GPUs as NVML sees them: a table, or everything about GPU N / all (--detail)'
            cand __nvml-worker 'Internal: load NVML in this child process and print its facts as JSON'
            cand completions 'Print the shell completion script for SHELL'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'gpudoctor;check'= {
            cand --format 'Output format'
            cand --color 'Colour: auto honours NO_COLOR, CLICOLOR_FORCE and whether stdout is a terminal'
            cand --root 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)'
            cand --timeout 'Overall time budget in seconds (default 5; 60 with --python-import); a probe still running then is reported as timed out'
            cand --fail-on 'Exit 1 when a finding at or above this severity exists'
            cand --only 'Run only these probes and/or report only these codes (comma-separated)'
            cand --skip 'Skip these probes and/or codes (comma-separated)'
            cand --from 'Re-run the rules on a report or snapshot saved by `--format json` (`-` for stdin); no probing'
            cand --user 'Judge device-node access for this user (name or uid) instead of the caller'
            cand --nvml-lib 'Load NVML from this file instead of the loader''s libnvidia-ml.so.1 (also GPUDOCTOR_NVML_LIB); never from inside --root'
            cand --python 'The Python interpreter whose environment to inspect first (default: python3 on PATH, VIRTUAL_ENV, CONDA_PREFIX, ./.venv)'
            cand --json 'Shorthand for --format json'
            cand -v 'Also show passing checks, every fact''s source, and all registered variables'
            cand --verbose 'Also show passing checks, every fact''s source, and all registered variables'
            cand --python-import 'Also import torch in that interpreter (never under --root) and compare its answers; raises --timeout to at least 60 s'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'gpudoctor;explain'= {
            cand --format 'Output format'
            cand --color 'Colour: auto honours NO_COLOR, CLICOLOR_FORCE and whether stdout is a terminal'
            cand --root 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)'
            cand --timeout 'Overall time budget in seconds (default 5; 60 with --python-import); a probe still running then is reported as timed out'
            cand --fail-on 'Exit 1 when a finding at or above this severity exists'
            cand --only 'Run only these probes and/or report only these codes (comma-separated)'
            cand --skip 'Skip these probes and/or codes (comma-separated)'
            cand --from 'Re-run the rules on a report or snapshot saved by `--format json` (`-` for stdin); no probing'
            cand --user 'Judge device-node access for this user (name or uid) instead of the caller'
            cand --nvml-lib 'Load NVML from this file instead of the loader''s libnvidia-ml.so.1 (also GPUDOCTOR_NVML_LIB); never from inside --root'
            cand --python 'The Python interpreter whose environment to inspect first (default: python3 on PATH, VIRTUAL_ENV, CONDA_PREFIX, ./.venv)'
            cand --list 'List every code with its one-line title'
            cand --json 'Shorthand for --format json'
            cand -v 'Also show passing checks, every fact''s source, and all registered variables'
            cand --verbose 'Also show passing checks, every fact''s source, and all registered variables'
            cand --python-import 'Also import torch in that interpreter (never under --root) and compare its answers; raises --timeout to at least 60 s'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'gpudoctor;toolkit'= {
            cand --format 'Output format'
            cand --color 'Colour: auto honours NO_COLOR, CLICOLOR_FORCE and whether stdout is a terminal'
            cand --root 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)'
            cand --timeout 'Overall time budget in seconds (default 5; 60 with --python-import); a probe still running then is reported as timed out'
            cand --fail-on 'Exit 1 when a finding at or above this severity exists'
            cand --only 'Run only these probes and/or report only these codes (comma-separated)'
            cand --skip 'Skip these probes and/or codes (comma-separated)'
            cand --from 'Re-run the rules on a report or snapshot saved by `--format json` (`-` for stdin); no probing'
            cand --user 'Judge device-node access for this user (name or uid) instead of the caller'
            cand --nvml-lib 'Load NVML from this file instead of the loader''s libnvidia-ml.so.1 (also GPUDOCTOR_NVML_LIB); never from inside --root'
            cand --python 'The Python interpreter whose environment to inspect first (default: python3 on PATH, VIRTUAL_ENV, CONDA_PREFIX, ./.venv)'
            cand --json 'Shorthand for --format json'
            cand -v 'Also show passing checks, every fact''s source, and all registered variables'
            cand --verbose 'Also show passing checks, every fact''s source, and all registered variables'
            cand --python-import 'Also import torch in that interpreter (never under --root) and compare its answers; raises --timeout to at least 60 s'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'gpudoctor;devices'= {
            cand --format 'Output format'
            cand --color 'Colour: auto honours NO_COLOR, CLICOLOR_FORCE and whether stdout is a terminal'
            cand --root 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)'
            cand --timeout 'Overall time budget in seconds (default 5; 60 with --python-import); a probe still running then is reported as timed out'
            cand --fail-on 'Exit 1 when a finding at or above this severity exists'
            cand --only 'Run only these probes and/or report only these codes (comma-separated)'
            cand --skip 'Skip these probes and/or codes (comma-separated)'
            cand --from 'Re-run the rules on a report or snapshot saved by `--format json` (`-` for stdin); no probing'
            cand --user 'Judge device-node access for this user (name or uid) instead of the caller'
            cand --nvml-lib 'Load NVML from this file instead of the loader''s libnvidia-ml.so.1 (also GPUDOCTOR_NVML_LIB); never from inside --root'
            cand --python 'The Python interpreter whose environment to inspect first (default: python3 on PATH, VIRTUAL_ENV, CONDA_PREFIX, ./.venv)'
            cand --detail 'Show everything about every GPU'
            cand --json 'Shorthand for --format json'
            cand -v 'Also show passing checks, every fact''s source, and all registered variables'
            cand --verbose 'Also show passing checks, every fact''s source, and all registered variables'
            cand --python-import 'Also import torch in that interpreter (never under --root) and compare its answers; raises --timeout to at least 60 s'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'gpudoctor;__nvml-worker'= {
            cand --lib 'lib'
            cand --format 'Output format'
            cand --color 'Colour: auto honours NO_COLOR, CLICOLOR_FORCE and whether stdout is a terminal'
            cand --root 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)'
            cand --timeout 'Overall time budget in seconds (default 5; 60 with --python-import); a probe still running then is reported as timed out'
            cand --fail-on 'Exit 1 when a finding at or above this severity exists'
            cand --only 'Run only these probes and/or report only these codes (comma-separated)'
            cand --skip 'Skip these probes and/or codes (comma-separated)'
            cand --from 'Re-run the rules on a report or snapshot saved by `--format json` (`-` for stdin); no probing'
            cand --user 'Judge device-node access for this user (name or uid) instead of the caller'
            cand --nvml-lib 'Load NVML from this file instead of the loader''s libnvidia-ml.so.1 (also GPUDOCTOR_NVML_LIB); never from inside --root'
            cand --python 'The Python interpreter whose environment to inspect first (default: python3 on PATH, VIRTUAL_ENV, CONDA_PREFIX, ./.venv)'
            cand --json 'Shorthand for --format json'
            cand -v 'Also show passing checks, every fact''s source, and all registered variables'
            cand --verbose 'Also show passing checks, every fact''s source, and all registered variables'
            cand --python-import 'Also import torch in that interpreter (never under --root) and compare its answers; raises --timeout to at least 60 s'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'gpudoctor;completions'= {
            cand --format 'Output format'
            cand --color 'Colour: auto honours NO_COLOR, CLICOLOR_FORCE and whether stdout is a terminal'
            cand --root 'Inspect the filesystem tree under DIR instead of / (nothing in it is executed or loaded)'
            cand --timeout 'Overall time budget in seconds (default 5; 60 with --python-import); a probe still running then is reported as timed out'
            cand --fail-on 'Exit 1 when a finding at or above this severity exists'
            cand --only 'Run only these probes and/or report only these codes (comma-separated)'
            cand --skip 'Skip these probes and/or codes (comma-separated)'
            cand --from 'Re-run the rules on a report or snapshot saved by `--format json` (`-` for stdin); no probing'
            cand --user 'Judge device-node access for this user (name or uid) instead of the caller'
            cand --nvml-lib 'Load NVML from this file instead of the loader''s libnvidia-ml.so.1 (also GPUDOCTOR_NVML_LIB); never from inside --root'
            cand --python 'The Python interpreter whose environment to inspect first (default: python3 on PATH, VIRTUAL_ENV, CONDA_PREFIX, ./.venv)'
            cand --json 'Shorthand for --format json'
            cand -v 'Also show passing checks, every fact''s source, and all registered variables'
            cand --verbose 'Also show passing checks, every fact''s source, and all registered variables'
            cand --python-import 'Also import torch in that interpreter (never under --root) and compare its answers; raises --timeout to at least 60 s'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'gpudoctor;help'= {
            cand check 'Run every probe and rule and print the report (the default)'
            cand explain 'Explain a finding code (GD012, gd012 or 12), or list every code'
            cand toolkit 'Show every CUDA toolkit, which one nvcc / CUDA_HOME / the loader picks, and the CUDA libraries in the loader''s order'
            cand devices 'The GPUs as NVML sees them: a table, or everything about GPU N / all (--detail)'
            cand __nvml-worker 'Internal: load NVML in this child process and print its facts as JSON'
            cand completions 'Print the shell completion script for SHELL'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'gpudoctor;help;check'= {
        }
        &'gpudoctor;help;explain'= {
        }
        &'gpudoctor;help;toolkit'= {
        }
        &'gpudoctor;help;devices'= {
        }
        &'gpudoctor;help;__nvml-worker'= {
        }
        &'gpudoctor;help;completions'= {
        }
        &'gpudoctor;help;help'= {
        }
    ]
    $completions[$command]
}
