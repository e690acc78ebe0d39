"""`python -m gpudoctor ARGS`: run the gpudoctor executable with ARGS."""

import os
import sys

from gpudoctor import find_gpudoctor_bin


def main() -> None:
    try:
        path = find_gpudoctor_bin()
    except FileNotFoundError as err:
        print(f"gpudoctor: {err}", file=sys.stderr)
        sys.exit(2)
    # Replace this process, so that exit codes, signals and the terminal are gpudoctor's own.
    os.execv(path, [path, *sys.argv[1:]])


if __name__ == "__main__":
    main()
