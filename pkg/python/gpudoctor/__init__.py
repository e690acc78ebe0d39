"""gpudoctor: doctor and device inspector for NVIDIA GPU / CUDA / PyTorch environments.

The wheel carries the `gpudoctor` executable; this package runs it. In a notebook,
``gpudoctor.check()`` shows the report as its HTML page; in a terminal, as the terminal
report; either way the value is the JSON report as a dict::

    import gpudoctor
    report = gpudoctor.check()            # arguments as on the command line: check("--no-smoke")
    report["summary"], report.exit_code

``python -m gpudoctor ARGS`` runs the executable where the scripts directory is not on PATH.
"""

import json
import os
import subprocess
import sys
import sysconfig

__all__ = ["Report", "check", "find_gpudoctor_bin"]


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


class Report(dict):
    """A `gpudoctor check --format json` report (the dict is the report, schema in
    `gpudoctor schema`), with the exit code the check had. Notebooks show it as the HTML
    report, terminals as the terminal report: both rendered by gpudoctor from this report
    (`gpudoctor check --from -`), so they say what the JSON says."""

    def __init__(self, data, exit_code):
        super().__init__(data)
        self.exit_code = exit_code

    @property
    def findings(self):
        return self.get("findings", [])

    def _render(self, fmt):
        env = dict(os.environ, NO_COLOR="1")
        out = subprocess.run(
            [find_gpudoctor_bin(), "check", "--from", "-", "--format", fmt, "--fail-on", "never"],
            input=json.dumps(self),
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        if out.returncode != 0:
            raise RuntimeError(f"gpudoctor check --from - --format {fmt}: {out.stderr.strip()}")
        return out.stdout

    def html(self):
        """The report as one self-contained HTML page."""
        return self._render("html")

    def text(self):
        """The report as the terminal shows it, without colour."""
        return self._render("human")

    def _repr_html_(self):
        return self.html()

    def __repr__(self):
        return self.text()


def check(*args, timeout=None):
    """Run `gpudoctor check --format json ARGS...` and return its report.

    The exit code (0, or 1 when a finding reaches --fail-on) is `report.exit_code`; a usage
    error or a failure to run raises RuntimeError with gpudoctor's message."""
    out = subprocess.run(
        [find_gpudoctor_bin(), "check", "--format", "json", *[str(a) for a in args]],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if out.returncode not in (0, 1) or not out.stdout.strip():
        raise RuntimeError(f"gpudoctor check failed ({out.returncode}): {out.stderr.strip()}")
    return Report(json.loads(out.stdout), out.returncode)
