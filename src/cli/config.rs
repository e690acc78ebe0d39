//! Configuration files: policy a fleet sets once instead of on every command line.
//!
//! Read in order, later files overriding earlier ones key by key:
//! `/etc/gpudoctor/config.toml`, `$XDG_CONFIG_HOME/gpudoctor/config.toml` (default
//! `~/.config`), then `--config FILE` or `GPUDOCTOR_CONFIG`. Missing default files are
//! skipped; a named file must exist. Unknown keys and wrong types are errors naming the
//! file and line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::de::{self, Deserializer};
use serde::Deserialize;
use toml::Spanned;

use super::args::{ColorChoice, FailOn, Format};
use super::CliError;

/// The system-wide file.
pub const SYSTEM_CONFIG: &str = "/etc/gpudoctor/config.toml";

/// What a finding code's severity becomes under a policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SeverityOverride {
    Error,
    Warning,
    Info,
    /// Not reported at all (as --skip CODE).
    Ignore,
}

impl SeverityOverride {
    pub fn parse(s: &str) -> Option<SeverityOverride> {
        match s.trim().to_ascii_lowercase().as_str() {
            "error" => Some(SeverityOverride::Error),
            "warning" => Some(SeverityOverride::Warning),
            "info" => Some(SeverityOverride::Info),
            "ignore" => Some(SeverityOverride::Ignore),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            SeverityOverride::Error => "error",
            SeverityOverride::Warning => "warning",
            SeverityOverride::Info => "info",
            SeverityOverride::Ignore => "ignore",
        }
    }
}

/// A number of seconds or a share, written `5` or `5.0`.
#[derive(Debug, Clone, Copy)]
pub struct Number(pub f64);

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Number, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = Number;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Number, E> {
                Ok(Number(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Number, E> {
                Ok(Number(v as f64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Number, E> {
                Ok(Number(v))
            }
        }
        d.deserialize_any(V)
    }
}

/// One configuration file as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    pub fail_on: Option<Spanned<FailOn>>,
    pub skip: Option<Spanned<Vec<String>>>,
    pub only: Option<Spanned<Vec<String>>>,
    pub timeout: Option<Spanned<Number>>,
    pub format: Option<Spanned<Format>>,
    pub color: Option<Spanned<ColorChoice>>,
    /// The GPUs each node must have (as --expect-gpus).
    pub gpus_per_node: Option<Spanned<u32>>,
    /// The driver every node must run: a version (580.95.05) or a branch (580).
    pub driver: Option<Spanned<String>>,
    /// The GPU model every node must have: a part of its name (H100, "A100-SXM4-80GB").
    pub gpu_model: Option<Spanned<String>>,
    /// Per-code severity: `GD038 = "ignore"`.
    #[serde(default)]
    pub severity: BTreeMap<Spanned<String>, Spanned<SeverityOverride>>,
    #[serde(default)]
    pub smoke: SmokeSection,
}

/// `[smoke]`: the on-device test's settings.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SmokeSection {
    /// false: `check` runs no smoke test (as --no-smoke).
    pub enabled: Option<Spanned<bool>>,
    pub matmul_size: Option<Spanned<u32>>,
    pub mem_fraction: Option<Spanned<Number>>,
    /// MiB per copy.
    pub transfer_size: Option<Spanned<u64>>,
}

/// A file that was read, with its text (for line numbers).
pub struct Loaded {
    pub path: PathBuf,
    text: String,
    pub file: ConfigFile,
}

impl Loaded {
    /// `FILE:LINE` of a value.
    pub fn at<T>(&self, v: &Spanned<T>) -> String {
        format!("{}:{}", self.path.display(), self.line_at(v.span().start))
    }

    /// The line of a byte offset in the file.
    pub fn line_at(&self, offset: usize) -> usize {
        line_of(&self.text, offset)
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The files to read, in order, and whether each must exist.
#[derive(Debug, Clone)]
pub struct Paths {
    pub files: Vec<(PathBuf, bool)>,
}

impl Paths {
    /// The system file, the user's (XDG_CONFIG_HOME, else HOME/.config) and the named one.
    pub fn standard(
        xdg_config_home: Option<&str>,
        home: Option<&str>,
        named: Option<PathBuf>,
    ) -> Paths {
        let mut files = vec![(PathBuf::from(SYSTEM_CONFIG), false)];
        // The XDG spec: a relative XDG_CONFIG_HOME is invalid and ignored.
        let user_dir = xdg_config_home
            .filter(|x| Path::new(x).is_absolute())
            .map(PathBuf::from)
            .or_else(|| {
                home.filter(|h| !h.is_empty())
                    .map(|h| Path::new(h).join(".config"))
            });
        if let Some(dir) = user_dir {
            files.push((dir.join("gpudoctor").join("config.toml"), false));
        }
        if let Some(named) = named {
            files.push((named, true));
        }
        Paths { files }
    }
}

/// A configuration is a few lines of TOML; anything larger is not one.
pub const CONFIG_LIMIT: u64 = 1 << 20;

/// Reads every file that exists, in order. Each is read as a regular file of at most
/// `CONFIG_LIMIT` bytes: these files are read on every command, so one linked to /dev/zero or
/// made a FIFO must fail at once, naming the file, not grow or hang every run.
pub fn load(paths: &Paths) -> Result<Vec<Loaded>, CliError> {
    use crate::fsys::{read_regular_limited, SmallFileError};
    let mut out = Vec::new();
    for (path, required) in &paths.files {
        let text = match read_regular_limited(path, CONFIG_LIMIT) {
            Ok(bytes) => String::from_utf8(bytes).map_err(|_| {
                CliError::Usage(format!("configuration {}: not UTF-8 text", path.display()))
            })?,
            Err(SmallFileError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound && !required => {
                continue
            }
            Err(e) => {
                return Err(CliError::Usage(format!(
                    "configuration {}: {e}",
                    path.display()
                )))
            }
        };
        out.push(parse(path, text)?);
    }
    Ok(out)
}

/// Parses one file's text; errors name the file and line.
pub fn parse(path: &Path, text: String) -> Result<Loaded, CliError> {
    let file: ConfigFile = toml::from_str(&text).map_err(|e| {
        let (line, quoted) = match e.span() {
            Some(s) => {
                let n = line_of(&text, s.start);
                let written = text.lines().nth(n - 1).unwrap_or("").trim();
                (
                    format!(":{n}"),
                    format!(" (in `{}`)", crate::render::printable(written)),
                )
            }
            None => (String::new(), String::new()),
        };
        CliError::Usage(format!(
            "configuration {}{line}: {}{quoted}",
            path.display(),
            e.message().trim_end()
        ))
    })?;
    let loaded = Loaded {
        path: path.to_path_buf(),
        text,
        file,
    };
    let mut seen: Vec<(&str, usize)> = Vec::new();
    for code in loaded.file.severity.keys() {
        if let Some(info) = crate::codes::lookup(code.get_ref()) {
            let line = loaded.line_at(code.span().start);
            if let Some((_, other)) = seen.iter().find(|(c, _)| *c == info.code) {
                let (a, b) = (line.min(*other), line.max(*other));
                return Err(CliError::Usage(format!(
                    "configuration {}:{b}: [severity] sets {} twice (lines {a} and {b})",
                    loaded.path.display(),
                    info.code
                )));
            }
            seen.push((info.code, line));
        }
        if crate::codes::lookup(code.get_ref()).is_none() {
            return Err(CliError::Usage(format!(
                "configuration {}: [severity] {:?} is not a finding code (see `gpudoctor explain`)",
                loaded.at(code),
                code.get_ref()
            )));
        }
    }
    Ok(loaded)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(text: &str) -> Result<Loaded, String> {
        parse(Path::new("/cfg.toml"), text.to_string()).map_err(|e| e.to_string())
    }

    #[test]
    fn every_key_is_read() {
        let l = parse_str(
            "fail_on = \"warning\"\nskip = [\"GD038\"]\nonly = []\ntimeout = 10\nformat = \"json\"\ncolor = \"never\"\n[severity]\nGD038 = \"ignore\"\n[smoke]\nenabled = false\nmatmul_size = 256\nmem_fraction = 0.5\ntransfer_size = 64\n",
        )
        .unwrap();
        let f = &l.file;
        assert_eq!(*f.fail_on.as_ref().unwrap().get_ref(), FailOn::Warning);
        assert_eq!(f.timeout.as_ref().unwrap().get_ref().0, 10.0);
        assert_eq!(l.at(f.timeout.as_ref().unwrap()), "/cfg.toml:4");
        assert_eq!(*f.format.as_ref().unwrap().get_ref(), Format::Json);
        assert_eq!(
            f.severity.values().next().map(|s| *s.get_ref()),
            Some(SeverityOverride::Ignore)
        );
        assert!(!*f.smoke.enabled.as_ref().unwrap().get_ref());
        assert_eq!(f.smoke.mem_fraction.as_ref().unwrap().get_ref().0, 0.5);
    }

    #[test]
    fn unknown_keys_and_wrong_types_name_the_line() {
        let e = parse_str("fail_on = \"error\"\nfial_on = \"warning\"\n")
            .err()
            .unwrap();
        assert!(e.contains("/cfg.toml:2"), "{e}");
        assert!(e.contains("fial_on"), "{e}");
        let e = parse_str("\n\ntimeout = \"ten\"\n").err().unwrap();
        assert!(e.contains("/cfg.toml:3"), "{e}");
        let e = parse_str("[smoke]\nmatmul = 5\n").err().unwrap();
        assert!(e.contains("/cfg.toml:2") && e.contains("matmul"), "{e}");
        let e = parse_str("fail_on = \"sometimes\"\n").err().unwrap();
        assert!(e.contains("/cfg.toml:1"), "{e}");
        let e = parse_str("[severity]\nGD999 = \"info\"\n").err().unwrap();
        assert!(e.contains("/cfg.toml:2") && e.contains("GD999"), "{e}");
        let e = parse_str("[severity]\ngd12 = \"error\"\nGD012 = \"ignore\"\n")
            .err()
            .unwrap();
        assert!(
            e.contains("/cfg.toml:3") && e.contains("lines 2 and 3"),
            "{e}"
        );
        let e = parse_str("[severity]\nGD038 = \"loud\"\n").err().unwrap();
        assert!(e.contains("/cfg.toml:2"), "{e}");
    }

    #[test]
    fn the_user_file_follows_xdg_then_home() {
        let p = Paths::standard(Some("/x"), Some("/home/a"), None);
        assert_eq!(p.files[0].0, PathBuf::from(SYSTEM_CONFIG));
        assert_eq!(p.files[1].0, PathBuf::from("/x/gpudoctor/config.toml"));
        let p = Paths::standard(Some("relative"), Some("/home/a"), Some("/n.toml".into()));
        assert_eq!(
            p.files[1].0,
            PathBuf::from("/home/a/.config/gpudoctor/config.toml")
        );
        assert_eq!(p.files[2], (PathBuf::from("/n.toml"), true));
    }

    #[test]
    fn a_missing_default_file_is_skipped_and_a_named_one_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths {
            files: vec![(dir.path().join("absent.toml"), false)],
        };
        assert!(load(&paths).unwrap().is_empty());
        let paths = Paths {
            files: vec![(dir.path().join("absent.toml"), true)],
        };
        assert!(load(&paths).is_err());
    }
}
