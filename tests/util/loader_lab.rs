//! A lab for loader truth tests: shared objects built with the C compiler, opened by the
//! real glibc loader through Python's ctypes, and by `gpudoctor libs`; tests/it/loader.rs and
//! tests/it/real_loader.rs compare the two.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::{gpudoctor, json};

pub struct Lab {
    pub dir: tempfile::TempDir,
    /// The interpreter that opens the files (python3, or a venv's python to import torch first).
    pub python: PathBuf,
    /// Python run before the files are opened (`import torch`).
    pub prelude: String,
    /// Extra arguments for `gpudoctor libs` (`--python VENV/bin/python`).
    pub libs_args: Vec<String>,
}

/// What a process made of opening files in order: the first error, or the files mapped.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    Loads { mapped: Vec<String> },
    Fails(String),
}

impl Lab {
    pub fn new() -> Lab {
        Lab {
            dir: tempfile::tempdir().unwrap(),
            python: PathBuf::from("python3"),
            prelude: String::new(),
            libs_args: Vec::new(),
        }
    }

    pub fn p(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Compiles `src` into `rel` as a shared object with `soname`, with extra linker/compiler
    /// arguments (`-L`, `-l:`, `-Wl,…`).
    pub fn cc(&self, rel: &str, soname: &str, src: &str, args: &[String]) -> PathBuf {
        let out = self.p(rel);
        std::fs::create_dir_all(out.parent().unwrap()).unwrap();
        let c = self.p(&format!("{}.c", rel.replace('/', "_")));
        std::fs::write(&c, src).unwrap();
        let status = Command::new("cc")
            .args(["-shared", "-fPIC", "-o"])
            .arg(&out)
            .arg(&c)
            .arg(format!("-Wl,-soname,{soname}"))
            .args(args)
            .status()
            .expect("a C compiler (cc)");
        assert!(status.success(), "cc failed for {rel}");
        out
    }

    /// A library `libdep.so.1` in `dir` whose `which()` says `tag`.
    pub fn dep(&self, dir: &str, tag: &str) -> PathBuf {
        self.cc(
            &format!("{dir}/libdep.so.1"),
            "libdep.so.1",
            &format!("const char *which(void) {{ return \"{tag}\"; }}\n"),
            &[],
        )
    }

    /// A library needing libdep.so.1 (found at link time in `link_dir`), with `paths`
    /// (e.g. `-Wl,--disable-new-dtags,-rpath,DIR`).
    pub fn consumer(&self, rel: &str, soname: &str, link_dir: &str, paths: &[String]) -> PathBuf {
        let mut args = vec![
            format!("-L{}", self.p(link_dir).display()),
            "-l:libdep.so.1".to_string(),
        ];
        args.extend(paths.iter().cloned());
        self.cc(
            rel,
            soname,
            "extern const char *which(void);\nconst char *consumer_which(void) { return which(); }\n",
            &args,
        )
    }

    /// glibc's verdict: Python opens the files in order with ctypes (RTLD_NOW) under
    /// `ld_library_path`, then reports the first error or the files mapped.
    pub fn real(&self, files: &[&Path], ld_library_path: Option<&str>) -> Outcome {
        let script = format!(
            "{}\n{}",
            self.prelude,
            r#"
import ctypes, json, sys
try:
    for f in sys.argv[1:]:
        ctypes.CDLL(f)
except OSError as e:
    print(json.dumps({"error": str(e)}))
    sys.exit(0)
mapped = sorted({l.split()[-1] for l in open("/proc/self/maps") if len(l.split()) >= 6 and ".so" in l.split()[-1]})
print(json.dumps({"mapped": mapped}))
"#
        );
        let mut cmd = Command::new(&self.python);
        cmd.arg("-c").arg(script).args(files);
        cmd.env_remove("LD_LIBRARY_PATH");
        if let Some(ld) = ld_library_path {
            cmd.env("LD_LIBRARY_PATH", ld);
        }
        let out = cmd.output().expect("python3");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        match v.get("error") {
            Some(e) => Outcome::Fails(e.as_str().unwrap().to_string()),
            None => Outcome::Loads {
                mapped: v["mapped"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|m| m.as_str().unwrap().to_string())
                    .collect(),
            },
        }
    }

    /// gpudoctor's prediction from `libs --format json`: the first failure, or the files it
    /// says the process maps (resolved like /proc/self/maps shows them).
    pub fn predicted(&self, files: &[&Path], ld_library_path: Option<&str>) -> (Outcome, Value) {
        let mut cmd = gpudoctor();
        cmd.args(["libs", "--all"])
            .args(&self.libs_args)
            .args(files);
        cmd.env_remove("LD_LIBRARY_PATH");
        if let Some(ld) = ld_library_path {
            cmd.env("LD_LIBRARY_PATH", ld);
        }
        let (_, v) = json(&mut cmd);
        let env = &v["environments"][0];
        let modules = env["modules"].as_array().unwrap();
        if let Some(first) = modules
            .iter()
            .flat_map(|m| m["failures"].as_array().unwrap())
            .next()
        {
            return (Outcome::Fails(first.as_str().unwrap().to_string()), v);
        }
        let mut mapped: Vec<String> = modules
            .iter()
            .flat_map(|m| m["libraries"].as_array().unwrap())
            .filter_map(|b| b["target"].as_str().map(str::to_string))
            .chain(modules.iter().map(|m| {
                std::fs::canonicalize(m["path"].as_str().unwrap())
                    .unwrap()
                    .display()
                    .to_string()
            }))
            .collect();
        mapped.sort();
        mapped.dedup();
        (Outcome::Loads { mapped }, v)
    }

    /// Both verdicts, and that they agree; for a load, that every file gpudoctor says is
    /// mapped under the lab directory is mapped for real, and the reverse.
    pub fn agree(&self, files: &[&Path], ld: Option<&str>) -> Outcome {
        let real = self.real(files, ld);
        let (predicted, v) = self.predicted(files, ld);
        let lab = std::fs::canonicalize(self.dir.path())
            .unwrap()
            .display()
            .to_string();
        let ours = |o: &Outcome| match o {
            Outcome::Loads { mapped } => Outcome::Loads {
                mapped: mapped
                    .iter()
                    .filter(|m| m.starts_with(&lab))
                    .cloned()
                    .collect(),
            },
            Outcome::Fails(e) => Outcome::Fails(e.clone()),
        };
        assert_eq!(
            ours(&predicted),
            ours(&real),
            "gpudoctor's prediction differs from glibc's\n{}",
            serde_json::to_string_pretty(&v).unwrap()
        );
        ours(&real)
    }

    pub fn path(&self, rel: &str) -> String {
        std::fs::canonicalize(self.p(rel))
            .unwrap()
            .display()
            .to_string()
    }
}
