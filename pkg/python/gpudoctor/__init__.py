"""gpudoctor: doctor and device inspector for NVIDIA GPU / CUDA / PyTorch environments.

The wheel carries the `gpudoctor` executable; this package only finds it, so that
`python -m gpudoctor` works where the scripts directory is not on PATH.
"""

import os
import sys
import sysconfig

__all__ = ["find_gpudoctor_bin"]


def find_gpudoctor_bin() -> str:
    """Return the path of the gpudoctor executable installed with this package."""
    exe = "gpudoctor" + (sysconfig.get_config_var("EXE") or "")
    candidates = [os.path.join(sysconfig.get_path("scripts"), exe)]
    # `pip install --user`: the user scheme's scripts directory.
    if sys.version_info >= (3, 10):
        user_scheme = sysconfig.get_preferred_scheme("user")
    elif os.name == "nt":
        user_scheme = "nt_user"
    else:
        user_scheme = "posix_user"
    candidates.append(os.path.join(sysconfig.get_path("scripts", scheme=user_scheme), exe))
    # `pip install --target DIR`: the scripts land in DIR/bin beside the package.
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    candidates.append(os.path.join(package_parent, "bin", exe))
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise FileNotFoundError(
        "the gpudoctor executable is not installed beside this package; looked in: "
        + ", ".join(candidates)
    )
