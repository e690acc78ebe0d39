//! `gpudoctor libs`: per Python environment, each CUDA-using native module, the libraries
//! the loader binds for it (→ file, how it was found, version), with the module's mark
//! taken from the findings (GD060 cites the modules it breaks).

use std::collections::HashSet;

use serde::Serialize;

use super::{printable, Style};
use crate::facts::linkage::{is_cuda_soname, Linkage, Module, FILES_GIVEN};
use crate::findings::{Finding, Summary};
use crate::loader::{file_name, Failure, How};
use crate::report::SCHEMA_VERSION;
use crate::rules::Check;
use crate::snapshot::Snapshot;
use crate::subject::Subject;
use crate::verdict::{Verdict, Verdicts};

#[derive(Serialize)]
pub struct LibsView<'a> {
    pub schema_version: u32,
    pub gpudoctor_version: &'static str,
    pub root: Option<&'a str>,
    pub environments: Vec<EnvView<'a>>,
    /// Why there is nothing to show, when there is not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub empty: Option<String>,
    pub findings: &'a [Finding],
    pub summary: Summary,
}

#[derive(Serialize)]
pub struct EnvView<'a> {
    pub site: &'a str,
    pub python: Option<&'a str>,
    pub ld_library_path: &'a [String],
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub limits: &'a [String],
    pub modules: Vec<ModuleView<'a>>,
}

#[derive(Serialize)]
pub struct ModuleView<'a> {
    pub package: &'a str,
    pub dist: Option<&'a str>,
    pub path: &'a str,
    pub verdict: Verdict,
    pub loads: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub optional: Option<&'a str>,
    /// What the loader prints, first failure first (glibc stops at the first).
    pub failures: Vec<String>,
    /// Every DT_NEEDED entry of the module and of the objects its dlopen mapped, each
    /// soname once (what earlier modules mapped is shown under them).
    pub libraries: Vec<BoundView<'a>>,
}

#[derive(Serialize)]
pub struct BoundView<'a> {
    pub needed: &'a str,
    /// The object whose DT_NEEDED names it.
    pub by: &'a str,
    pub path: Option<&'a str>,
    pub target: Option<&'a str>,
    pub how: Option<&'a How>,
    pub version: Option<&'a str>,
    pub cuda: bool,
    /// Named by one of the module's failures.
    pub fails: bool,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub searched: &'a [String],
}

pub fn view<'a>(snap: &'a Snapshot, checks: &[Check], findings: &'a [Finding]) -> LibsView<'a> {
    let verdicts = Verdicts::new(findings, checks);
    let linkages: &[Linkage] = snap.linkage.as_deref().unwrap_or(&[]);
    let environments: Vec<EnvView> = linkages
        .iter()
        .map(|l| EnvView {
            site: &l.site,
            python: l.python.as_deref(),
            ld_library_path: &l.ld_library_path,
            limits: &l.limits,
            modules: l
                .modules
                .iter()
                .map(|m| module_view(l, m, &verdicts))
                .collect(),
        })
        .collect();
    let empty = environments.is_empty().then(|| {
        match snap.probes.get("linkage").and_then(|p| p.detail.clone()) {
            Some(d) => format!("the linkage probe did not finish: {d}"),
            None => "no CUDA-using native module in any Python environment found".to_string(),
        }
    });
    LibsView {
        schema_version: SCHEMA_VERSION,
        gpudoctor_version: env!("CARGO_PKG_VERSION"),
        root: snap.root.as_deref(),
        environments,
        empty,
        findings,
        summary: Summary::of(findings),
    }
}

fn module_view<'a>(l: &'a Linkage, m: &'a Module, verdicts: &Verdicts) -> ModuleView<'a> {
    let failing: HashSet<&str> =
        m.failures
            .iter()
            .filter_map(|f| match &f.failure {
                Failure::Missing { needed, .. } => Some(needed.as_str()),
                Failure::VersionNotFound { library, .. }
                | Failure::UndefinedSymbol { library, .. } => Some(file_name(library)),
                _ => None,
            })
            .collect();
    let mut libraries = Vec::new();
    let mut seen = HashSet::new();
    for &i in &m.mapped {
        let Some(o) = l.object(i) else { continue };
        for b in &o.deps {
            if !seen.insert(b.needed.as_str()) {
                continue;
            }
            let bound = b.object.and_then(|j| l.object(j));
            let path = bound.map(|t| t.path.as_str());
            let fails = failing.contains(b.needed.as_str())
                || path.is_some_and(|p| failing.contains(file_name(p)));
            libraries.push(BoundView {
                needed: &b.needed,
                by: &o.path,
                path,
                target: bound.map(|t| t.target.as_str()),
                how: b.how.as_ref(),
                version: b
                    .object
                    .and_then(|j| l.version_of(j))
                    .map(|v| v.version.as_str()),
                cuda: is_cuda_soname(&b.needed),
                fails,
                searched: &b.searched,
            });
        }
    }
    ModuleView {
        package: &m.package,
        dist: m.dist.as_deref(),
        path: &m.path,
        verdict: verdicts.of(&Subject::Extension(m.path.clone())),
        loads: m.loads(),
        optional: m.optional.as_deref(),
        failures: m
            .failures
            .iter()
            .map(|f| f.failure.loader_message())
            .collect(),
        libraries,
    }
}

pub fn render_json(v: &LibsView) -> String {
    super::json::pretty(v, "libs view")
}

/// A path shown relative to the environment's site-packages when it lies inside.
fn short<'a>(path: &'a str, site: &str) -> &'a str {
    path.strip_prefix(site)
        .and_then(|p| p.strip_prefix('/'))
        .unwrap_or(path)
}

pub fn render_human(v: &LibsView, st: &Style, all: bool, width: usize) -> String {
    use super::width::wrap;
    let mut out = String::new();
    let put = |out: &mut String, text: &str, prefix: &str, indent: &str| {
        out.push_str(&wrap(text, width, prefix, indent));
        out.push('\n');
    };
    if let Some(root) = v.root {
        put(
            &mut out,
            &format!("Inspecting --root {}", printable(root)),
            "",
            "  ",
        );
    }
    if let Some(e) = &v.empty {
        put(&mut out, &st.dim(e), "", "");
    }
    for env in &v.environments {
        let title = if env.site == FILES_GIVEN {
            "Files given, opened in order".to_string()
        } else {
            format!("Python environment {}", printable(env.site))
        };
        put(&mut out, &st.bold(&title), "", "  ");
        if let Some(p) = env.python {
            put(&mut out, &printable(p), "  interpreter: ", "    ");
        }
        let ld = if env.ld_library_path.is_empty() {
            "unset".to_string()
        } else {
            env.ld_library_path.join(":")
        };
        put(&mut out, &printable(&ld), "  LD_LIBRARY_PATH: ", "    ");
        for limit in env.limits {
            put(&mut out, &st.yellow(&printable(limit)), "  ", "    ");
        }
        for m in &env.modules {
            out.push('\n');
            let mark = super::form::mark(m.verdict, st);
            let label = m.dist.unwrap_or(m.package);
            put(
                &mut out,
                &format!(
                    "{}  {}",
                    st.bold(&printable(label)),
                    printable(short(m.path, env.site))
                ),
                &format!("{mark} "),
                "    ",
            );
            if let Some(o) = m.optional.filter(|_| !m.loads) {
                put(
                    &mut out,
                    &st.dim(&format!("optional: {o}")),
                    "    ",
                    "      ",
                );
            }
            for f in &m.failures {
                put(&mut out, &printable(f), "    loader: ", "      ");
            }
            for b in m.libraries.iter().filter(|b| all || b.cuda || b.fails) {
                let line = match (b.path, b.how) {
                    (Some(p), Some(how)) => {
                        let mut s = format!("{} → {}", b.needed, printable(short(p, env.site)));
                        s.push_str(&format!("  [{}]", printable(&how.describe())));
                        if let Some(v) = b.version {
                            s.push_str(&format!("  {}", printable(v)));
                        }
                        s
                    }
                    _ => format!(
                        "{}  not found (searched {})",
                        b.needed,
                        if b.searched.is_empty() {
                            "nothing".to_string()
                        } else {
                            printable(&b.searched.join(", ")).into_owned()
                        }
                    ),
                };
                let lead = if b.fails {
                    format!("    {} ", super::form::mark(m.verdict, st))
                } else {
                    "      ".to_string()
                };
                put(&mut out, &line, &lead, "        ");
            }
        }
        out.push('\n');
    }
    if v.findings.is_empty() {
        put(&mut out, &st.green("No library problems found."), "", "");
    }
    out.push_str(&super::human::findings_blocks(v.findings, st, width));
    if !all && v.environments.iter().any(|e| !e.modules.is_empty()) {
        put(
            &mut out,
            &st.dim("CUDA libraries and failures shown; --all shows every library bound, `gpudoctor explain GD060` how it is judged."),
            "",
            "",
        );
    }
    st.finish(out)
}

pub fn render_markdown(v: &LibsView, all: bool) -> String {
    let esc = super::markdown::cell;
    let mut out = String::from("## gpudoctor libs\n\n");
    if let Some(e) = &v.empty {
        out.push_str(&format!("{}\n\n", esc(e)));
    }
    for env in &v.environments {
        out.push_str(&format!("### {}\n\n", esc(env.site)));
        out.push_str(
            "| module | loads | library | file | found by | version |\n|---|---|---|---|---|---|\n",
        );
        for m in &env.modules {
            let label = format!(
                "{} `{}`",
                esc(m.dist.unwrap_or(m.package)),
                esc(short(m.path, env.site))
            );
            let loads = format!(
                "{} {}",
                super::form::symbol(m.verdict),
                if m.loads { "yes" } else { "no" }
            );
            let libs: Vec<&BoundView> = m
                .libraries
                .iter()
                .filter(|b| all || b.cuda || b.fails)
                .collect();
            if libs.is_empty() {
                out.push_str(&format!("| {label} | {loads} | — | — | — | — |\n"));
            }
            for (i, b) in libs.iter().enumerate() {
                let (l, ld) = if i == 0 {
                    (label.as_str(), loads.as_str())
                } else {
                    ("", "")
                };
                out.push_str(&format!(
                    "| {l} | {ld} | `{}` | {} | {} | {} |\n",
                    esc(b.needed),
                    b.path
                        .map(|p| format!("`{}`", esc(short(p, env.site))))
                        .unwrap_or_else(|| "not found".into()),
                    b.how
                        .map(|h| esc(&h.describe()))
                        .unwrap_or_else(|| "—".into()),
                    b.version.map(esc).unwrap_or_else(|| "—".into()),
                ));
            }
        }
        out.push('\n');
    }
    if v.findings.is_empty() {
        out.push_str("No library problems found.\n");
    }
    out.push_str(&super::markdown::findings_section(v.findings));
    out
}
