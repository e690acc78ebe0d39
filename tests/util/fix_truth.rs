//! The sandbox in which tests run the fix commands gpudoctor prints: a local package index
//! (PyPI and PyTorch's per-CUDA indexes, served over HTTP on 127.0.0.1 by Python's
//! http.server) holding stand-in wheels, real environments made by the real tools (a venv by
//! `python3 -m venv`, a uv venv, a uv project, a poetry project), and the real installers (pip
//! 25.3 from the wheelhouse `.ci/fetch-packaging-tools` fills, the venv's own pip, uv 0.13.9,
//! poetry 2.5.1).
//!
//! The printed command is run as printed, with two mappings the harness owns: the public index
//! URLs become the local server's, and a path inside the fake root (`/venv/bin/python`) becomes
//! the real one.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The public index gpudoctor names for PyTorch's wheels.
pub const PYTORCH_INDEX: &str = "https://download.pytorch.org/whl/";

/// A tool this tier needs, or why it is absent. With GPUDOCTOR_REQUIRE_FIX_TOOLS set a missing
/// tool fails the test; without, the test says so and stops.
pub fn tools() -> Option<Tools> {
    let require = std::env::var_os("GPUDOCTOR_REQUIRE_FIX_TOOLS").is_some();
    let missing = |what: String| {
        if require {
            panic!("GPUDOCTOR_REQUIRE_FIX_TOOLS is set but {what}");
        }
        super::skip(format_args!(
            "{what} (set GPUDOCTOR_PACKAGING_TOOLS, see .ci/fetch-packaging-tools)"
        ));
        None
    };
    let python = PathBuf::from("/usr/bin/python3");
    let python = if python.exists() {
        python
    } else {
        match which("python3") {
            Some(p) => p,
            None => return missing("python3 is not on PATH".into()),
        }
    };
    let venv_ok = Command::new(&python)
        .args(["-c", "import venv, ensurepip"])
        .status()
        .is_ok_and(|s| s.success());
    if !venv_ok {
        return missing(format!("{} has no venv/ensurepip", python.display()));
    }
    let Some(tools_dir) = std::env::var_os("GPUDOCTOR_PACKAGING_TOOLS").map(PathBuf::from) else {
        return missing("GPUDOCTOR_PACKAGING_TOOLS is not set".into());
    };
    let uv = tools_dir.join("bin/uv");
    if !uv.exists() {
        return missing(format!("{} is missing", uv.display()));
    }
    let wheelhouse = tools_dir.join("wheelhouse");
    let pip_wheel = std::fs::read_dir(&wheelhouse).ok().and_then(|d| {
        d.flatten().map(|e| e.path()).find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("pip-25.3-"))
        })
    });
    let Some(pip_wheel) = pip_wheel else {
        return missing(format!("no pip-25.3 wheel in {}", wheelhouse.display()));
    };
    let poetry = tools_dir.join("bin/poetry");
    if !poetry.exists() {
        return missing(format!("{} is missing", poetry.display()));
    }
    Some(Tools {
        python,
        uv,
        pip_wheel,
    })
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

pub struct Tools {
    pub python: PathBuf,
    pub uv: PathBuf,
    /// pip 25.3's wheel, installed offline into a venv that is to run pip 25.3.
    pub pip_wheel: PathBuf,
}

/// A stand-in wheel: real wheel file layout (dist-info with METADATA, WHEEL, RECORD), any
/// files, the requirements its METADATA declares.
pub struct Wheel {
    pub name: String,
    pub version: String,
    pub requires: Vec<String>,
    pub requires_python: Option<String>,
    /// `Provides-Extra:` names (an extra not declared is warned about by pip and uv).
    pub extras: Vec<String>,
    pub files: Vec<(String, Vec<u8>)>,
}

impl Wheel {
    pub fn new(name: &str, version: &str) -> Wheel {
        Wheel {
            name: name.into(),
            version: version.into(),
            requires: Vec::new(),
            requires_python: None,
            extras: Vec::new(),
            files: Vec::new(),
        }
    }

    pub fn requires(mut self, r: &str) -> Wheel {
        self.requires.push(r.into());
        self
    }

    pub fn file(mut self, path: &str, content: &[u8]) -> Wheel {
        self.files.push((path.into(), content.to_vec()));
        self
    }

    /// torch at `version` (`2.5.1+cu124`) whose torch/version.py says `cuda` (None: a CPU
    /// build), as the PyTorch probe reads it.
    pub fn torch(version: &str, cuda: Option<&str>) -> Wheel {
        let cuda = cuda.map_or("None".to_string(), |c| format!("'{c}'"));
        Wheel::new("torch", version)
            .file("torch/__init__.py", b"from .version import __version__\n")
            .file(
                "torch/version.py",
                format!("__version__ = '{version}'\ndebug = False\ncuda = {cuda}\nhip = None\ngit_version = '0'\n").as_bytes(),
            )
    }

    /// A companion (torchvision, torchaudio) or a framework pinning `torch_spec`.
    pub fn pinning_torch(name: &str, version: &str, torch_spec: &str) -> Wheel {
        let module = name.replace('-', "_");
        Wheel::new(name, version)
            .requires(&format!("torch{torch_spec}"))
            .file(&format!("{module}/__init__.py"), b"")
    }

    fn stem(&self) -> String {
        self.name.replace('-', "_")
    }

    /// The file name (`torch-2.5.1+cu124-py3-none-any.whl`).
    pub fn file_name(&self) -> String {
        format!("{}-{}-py3-none-any.whl", self.stem(), self.version)
    }

    pub fn bytes(&self) -> Vec<u8> {
        let di = format!("{}-{}.dist-info", self.stem(), self.version);
        let mut md = format!(
            "Metadata-Version: 2.1\nName: {}\nVersion: {}\n",
            self.name, self.version
        );
        if let Some(p) = &self.requires_python {
            md.push_str(&format!("Requires-Python: {p}\n"));
        }
        for e in &self.extras {
            md.push_str(&format!("Provides-Extra: {e}\n"));
        }
        for r in &self.requires {
            md.push_str(&format!("Requires-Dist: {r}\n"));
        }
        let mut files = self.files.clone();
        files.push((format!("{di}/METADATA"), md.into_bytes()));
        files.push((
            format!("{di}/WHEEL"),
            b"Wheel-Version: 1.0\nGenerator: gpudoctor-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n".to_vec(),
        ));
        let mut record: String = files.iter().map(|(p, _)| format!("{p},,\n")).collect();
        record.push_str(&format!("{di}/RECORD,,\n"));
        files.push((format!("{di}/RECORD"), record.into_bytes()));
        stored_zip(&files)
    }
}

/// A zip archive with every member stored (no compression): what a wheel is.
fn stored_zip(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, data) in files {
        let mut crc = flate2::Crc::new();
        crc.update(data);
        let crc = crc.sum();
        let offset = out.len() as u32;
        let header = |sig: u32, central_entry: bool| {
            let mut h = Vec::new();
            h.extend(sig.to_le_bytes());
            if central_entry {
                h.extend(20u16.to_le_bytes()); // made by
            }
            h.extend(20u16.to_le_bytes()); // version needed
            h.extend(0u16.to_le_bytes()); // flags
            h.extend(0u16.to_le_bytes()); // stored
            h.extend(0u16.to_le_bytes()); // time
            h.extend(0x21u16.to_le_bytes()); // date: 1980-01-01
            h.extend(crc.to_le_bytes());
            h.extend((data.len() as u32).to_le_bytes());
            h.extend((data.len() as u32).to_le_bytes());
            h.extend((name.len() as u16).to_le_bytes());
            h.extend(0u16.to_le_bytes()); // extra
            if central_entry {
                h.extend(0u16.to_le_bytes()); // comment
                h.extend(0u16.to_le_bytes()); // disk
                h.extend(0u16.to_le_bytes()); // internal attributes
                h.extend((0o100644u32 << 16).to_le_bytes());
                h.extend(offset.to_le_bytes());
            }
            h.extend(name.as_bytes());
            h
        };
        out.extend(header(0x0403_4b50, false));
        out.extend(data);
        central.extend(header(0x0201_4b50, true));
    }
    let cd_offset = out.len() as u32;
    out.extend(&central);
    out.extend(0x0605_4b50u32.to_le_bytes());
    out.extend([0u8; 4]);
    out.extend((files.len() as u16).to_le_bytes());
    out.extend((files.len() as u16).to_le_bytes());
    out.extend((central.len() as u32).to_le_bytes());
    out.extend(cd_offset.to_le_bytes());
    out.extend(0u16.to_le_bytes());
    out
}

/// The local index: `pypi/NAME/` stands for PyPI, `whl/VARIANT/NAME/` for
/// download.pytorch.org/whl/VARIANT. A directory listing is a PEP 503 simple page.
pub struct Index {
    pub dir: tempfile::TempDir,
    server: Child,
    pub port: u16,
}

impl Index {
    pub fn start(tools: &Tools) -> Index {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("pypi")).unwrap();
        let mut server = Command::new(&tools.python)
            .args([
                "-u",
                "-m",
                "http.server",
                "0",
                "--bind",
                "127.0.0.1",
                "--directory",
            ])
            .arg(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start python3 -m http.server");
        // "Serving HTTP on 127.0.0.1 port 41234 (http://127.0.0.1:41234/) ..."
        let mut line = String::new();
        BufReader::new(server.stdout.take().unwrap())
            .read_line(&mut line)
            .expect("http.server's first line");
        let port = line
            .split("port ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {line:?}"));
        Index { dir, server, port }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}/{path}", self.port)
    }

    /// Publishes `w` on PyPI (`index` None) or PyTorch's index `index` ("cu124").
    pub fn publish(&self, index: Option<&str>, w: &Wheel) -> &Self {
        let project = w.name.to_ascii_lowercase().replace('_', "-");
        let dir = match index {
            Some(v) => self.dir.path().join("whl").join(v).join(&project),
            None => self.dir.path().join("pypi").join(&project),
        };
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(w.file_name()), w.bytes()).unwrap();
        self
    }

    /// The command as printed, with the public indexes mapped onto this one.
    pub fn local(&self, command: &str) -> String {
        command
            .replace(PYTORCH_INDEX, &self.url("whl/"))
            .replace("https://pypi.org/simple", &self.url("pypi"))
    }
}

impl Drop for Index {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

/// Installer settings for a sandbox: PyPI is the local index (pip's and uv's configuration
/// files, so that uv does not write it into a project), caches and HOME are private.
pub struct Sandbox {
    pub home: tempfile::TempDir,
}

impl Sandbox {
    pub fn new(index: &Index) -> Sandbox {
        let home = tempfile::tempdir().expect("tempdir");
        let h = home.path();
        std::fs::create_dir_all(h.join("config/uv")).unwrap();
        std::fs::create_dir_all(h.join("config/pip")).unwrap();
        std::fs::write(
            h.join("config/uv/uv.toml"),
            format!(
                "[[index]]\nurl = \"{}\"\ndefault = true\n",
                index.url("pypi")
            ),
        )
        .unwrap();
        std::fs::write(
            h.join("config/pip/pip.conf"),
            format!(
                "[global]\nindex-url = {}\ndisable-pip-version-check = true\n",
                index.url("pypi")
            ),
        )
        .unwrap();
        Sandbox { home }
    }

    /// `sh -c COMMAND` with the installers aimed at the local index.
    pub fn sh(&self, command: &str, cwd: &Path) -> std::process::Output {
        let h = self.home.path();
        let uv_dir = std::env::var_os("GPUDOCTOR_PACKAGING_TOOLS")
            .map(|d| PathBuf::from(d).join("bin"))
            .unwrap_or_default();
        Command::new("/bin/sh")
            .arg("-c")
            .arg(command)
            .current_dir(cwd)
            .env_clear()
            .env("PATH", format!("{}:/usr/bin:/bin", uv_dir.display()))
            .env("HOME", h)
            .env("XDG_CONFIG_HOME", h.join("config"))
            .env("PIP_CACHE_DIR", h.join("pip-cache"))
            .env("UV_CACHE_DIR", h.join("uv-cache"))
            .env("UV_PYTHON_DOWNLOADS", "never")
            .env("UV_NO_PROGRESS", "1")
            // A project's environment in the project (`.venv`), as the fixes expect; no
            // keyring (a desktop one would be asked for every index).
            .env("POETRY_VIRTUALENVS_IN_PROJECT", "true")
            .env("POETRY_CACHE_DIR", h.join("poetry-cache"))
            .env("POETRY_NO_INTERACTION", "1")
            .env("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
            .output()
            .expect("run /bin/sh")
    }

    /// Runs `command` and fails the test, with its output, unless it succeeds.
    pub fn run_ok(&self, command: &str, cwd: &Path) -> String {
        let out = self.sh(command, cwd);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "`{command}` failed:\n{text}");
        text
    }
}

/// The distributions installed in a site-packages directory, as (normalised name, version).
pub fn installed(site: &Path) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(site)
        .map(|d| {
            d.flatten()
                .filter_map(|e| {
                    let n = e.file_name().to_string_lossy().into_owned();
                    let stem = n.strip_suffix(".dist-info")?;
                    let (name, version) = stem.split_once('-')?;
                    Some((
                        name.to_ascii_lowercase().replace('_', "-"),
                        version.to_string(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// The version of `name` installed in `site`.
pub fn version_of(site: &Path, name: &str) -> Option<String> {
    installed(site)
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v)
}

/// Writes `text` to `path`, creating its directory.
pub fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut f = std::fs::File::create(path).unwrap();
    f.write_all(text.as_bytes()).unwrap();
}
