//! `gpudoctor toolkit`: every CUDA toolkit, which one each consumer gets, and the
//! loader's view of the CUDA libraries — as text, Markdown or JSON.

use serde::Serialize;

use super::width::wrap;
use super::{printable, Style};
use crate::compat::arch::compiler_targets;
use crate::compat::CudaVersion;
use crate::fact::Fact;
use crate::facts::libraries::{Candidate, Libraries, Library, SearchPath};
use crate::facts::toolkits::{CudaHome, NvccOnPath, Toolkit, Toolkits};
use crate::findings::{Finding, Summary};
use crate::report::SCHEMA_VERSION;
use crate::snapshot::Snapshot;

/// The JSON document: the same facts the text shows.
#[derive(Serialize)]
pub struct ToolkitView<'a> {
    pub schema_version: u32,
    pub gpudoctor_version: &'static str,
    pub root: Option<&'a str>,
    pub driver: Option<DriverView>,
    pub toolkits: Vec<ToolkitEntry<'a>>,
    pub rejected: &'a [crate::facts::toolkits::Rejected],
    pub winners: Winners<'a>,
    pub search_path: Option<&'a SearchPath>,
    pub libraries: &'a [Library],
    pub findings: &'a [Finding],
    pub summary: Summary,
}

#[derive(Serialize)]
pub struct DriverView {
    pub version: String,
    pub source: String,
    pub from_kernel_module: bool,
}

#[derive(Serialize)]
pub struct ToolkitEntry<'a> {
    #[serde(flatten)]
    pub toolkit: &'a Toolkit,
    /// Oldest and newest GPU architecture its nvcc compiles for (src/compat/arch.rs).
    pub compiler_targets: Option<[String; 2]>,
}

#[derive(Serialize)]
pub struct Winners<'a> {
    /// The nvcc a shell runs.
    pub nvcc: Option<&'a NvccOnPath>,
    /// The toolkit torch.utils.cpp_extension builds with.
    pub cuda_home: Option<&'a CudaHome>,
    /// The libcudart each soname resolves to.
    pub libcudart: Vec<LoaderWinner<'a>>,
}

#[derive(Serialize)]
pub struct LoaderWinner<'a> {
    pub soname: &'a str,
    pub path: &'a str,
    pub version: Option<&'a str>,
}

fn targets(t: &Toolkit) -> Option<[String; 2]> {
    // Only a toolkit with a compiler compiles for anything.
    t.nvcc.as_ref()?;
    let ct = compiler_targets(t.cuda?)?;
    Some([ct.min().sm(), ct.max().sm()])
}

pub fn view<'a>(snap: &'a Snapshot, findings: &'a [Finding]) -> ToolkitView<'a> {
    static EMPTY_LIBS: &[Library] = &[];
    let tk: Option<&Toolkits> = snap.toolkits.as_ref();
    let libs: Option<&Libraries> = snap.libraries.as_ref();
    ToolkitView {
        schema_version: SCHEMA_VERSION,
        gpudoctor_version: env!("CARGO_PKG_VERSION"),
        root: snap.root.as_deref(),
        driver: snap.driver_version().map(|d| DriverView {
            version: d.version.as_str().to_string(),
            source: d.source,
            from_kernel_module: d.kernel,
        }),
        toolkits: tk
            .map(|t| {
                t.installs
                    .iter()
                    .map(|toolkit| ToolkitEntry {
                        toolkit,
                        compiler_targets: targets(toolkit),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        rejected: tk.map(|t| t.rejected.as_slice()).unwrap_or(&[]),
        winners: Winners {
            nvcc: tk.and_then(|t| t.nvcc_on_path.as_ref()),
            cuda_home: tk.map(|t| &t.cuda_home),
            libcudart: libs
                .map(|l| {
                    l.family("libcudart")
                        .filter_map(|lib| {
                            let c = lib.loaded()?;
                            Some(LoaderWinner {
                                soname: &lib.soname,
                                path: &c.path,
                                version: c.version.as_deref(),
                            })
                        })
                        .collect()
                })
                .unwrap_or_default(),
        },
        search_path: libs.map(|l| &l.search),
        libraries: libs.map(|l| l.libraries.as_slice()).unwrap_or(EMPTY_LIBS),
        findings,
        summary: Summary::of(findings),
    }
}

pub fn render_json(v: &ToolkitView) -> String {
    super::json::pretty(v, "toolkit view")
}

fn version_text(t: &Toolkit) -> String {
    match t.version.get() {
        Some(v) => v.clone(),
        None => format!(
            "unknown ({})",
            t.version
                .missing_info()
                .map(|m| m.detail.as_str())
                .unwrap_or("")
        ),
    }
}

fn fact_text<T: std::fmt::Debug>(f: &Fact<T>) -> String {
    match f.missing_info() {
        Some(m) => format!("{} ({})", m.reason.as_str(), m.detail),
        None => format!("{:?}", f.get()),
    }
}

/// A candidate library file: "    → path → target  [via]  version …", wrapped under the path.
fn candidate_line(c: &Candidate, winner: bool, st: &Style, width: usize) -> String {
    let mark = if winner {
        st.green("→")
    } else if c.problem.is_some() {
        st.red("✗")
    } else {
        " ".to_string()
    };
    let mut line = printable(&c.path).into_owned();
    if let Some(t) = c.target.as_deref().filter(|t| *t != c.path) {
        line.push_str(&format!(" → {}", printable(t)));
    }
    line.push_str(&format!(
        "  [{}{}]",
        c.via.describe(),
        c.detail
            .as_deref()
            .map(|d| format!(" {}", printable(d)))
            .unwrap_or_default()
    ));
    if let Some(v) = &c.version {
        line.push_str(&format!("  {}", printable(v)));
    }
    if c.stub {
        line.push_str(&format!("  {}", st.red("STUB")));
    }
    if c.forward_compat {
        line.push_str(&format!("  {}", st.yellow("forward-compat")));
    }
    if let Some(p) = &c.problem {
        line.push_str(&format!("  {}", st.dim(&printable(p))));
    }
    wrap(&line, width, &format!("    {mark} "), "      ")
}

/// `gpudoctor toolkit` for a terminal (ASCII where it needs it).
pub fn render_human(v: &ToolkitView, st: &Style, verbose: bool, width: usize) -> String {
    st.finish(human_text(v, st, verbose, width))
}

fn human_text(v: &ToolkitView, st: &Style, verbose: bool, width: usize) -> String {
    let mut out = String::new();
    // One line of text, wrapped to the width under `indent`.
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
        put(&mut out, "", "", "");
    }
    match &v.driver {
        Some(d) => put(
            &mut out,
            &format!("Driver: {} ({})", d.version, printable(&d.source)),
            "",
            "  ",
        ),
        None => put(&mut out, "Driver: not found", "", ""),
    }
    put(&mut out, "", "", "");

    put(&mut out, &st.bold("CUDA toolkits"), "", "");
    if v.toolkits.is_empty() {
        put(&mut out, "none found", "  ", "");
    }
    for e in &v.toolkits {
        let t = e.toolkit;
        put(
            &mut out,
            &format!(
                "{}  {}",
                st.cyan(&printable(&t.root)),
                printable(&version_text(t))
            ),
            "  ",
            "      ",
        );
        let routes: Vec<String> = t
            .found
            .iter()
            .map(|f| {
                if f.path == t.root || f.path == f.route.describe() {
                    f.route.describe().to_string()
                } else {
                    format!("{} ({})", f.route.describe(), printable(&f.path))
                }
            })
            .collect();
        let detail = "          ";
        put(&mut out, &routes.join(", "), "      found via: ", detail);
        put(
            &mut out,
            &printable(&t.version.source),
            "      version from: ",
            detail,
        );
        let nvcc = t.nvcc.as_deref().map(|n| printable(n).into_owned());
        put(
            &mut out,
            &format!(
                "{}   compiles for: {}",
                nvcc.unwrap_or_else(|| "none".into()),
                e.compiler_targets
                    .as_ref()
                    .map(|[a, b]| format!("{a} – {b}"))
                    .unwrap_or_else(|| "unknown".into())
            ),
            "      nvcc: ",
            detail,
        );
        for d in &t.disagreements {
            put(
                &mut out,
                &format!("{} says {}", printable(&d.source), printable(&d.version)),
                &format!("      {} ", st.yellow("!")),
                detail,
            );
        }
    }
    for r in v.rejected {
        put(
            &mut out,
            &format!(
                "{} ({}): {}",
                printable(&r.path),
                r.route.describe(),
                printable(&r.reason)
            ),
            &format!("  {} ", st.red("✗")),
            "    ",
        );
    }

    put(&mut out, "", "", "");
    put(&mut out, &st.bold("Which toolkit wins"), "", "");
    let root_of = |i: Option<usize>| -> String {
        i.and_then(|i| v.toolkits.get(i))
            .map(|e| {
                let t = e.toolkit;
                format!(
                    "{} (CUDA {})",
                    printable(&t.root),
                    t.cuda.map_or("?".into(), |c: CudaVersion| c.to_string())
                )
            })
            .unwrap_or_else(|| "no toolkit".into())
    };
    // "  nvcc in a shell:        " — values wrap under the value column.
    let value = " ".repeat(26);
    match v.winners.nvcc {
        Some(n) => put(
            &mut out,
            &format!("{} → {}", printable(&n.path), root_of(n.toolkit)),
            "  nvcc in a shell:        ",
            &value,
        ),
        None => put(
            &mut out,
            "not on PATH",
            "  nvcc in a shell:        ",
            &value,
        ),
    }
    if let Some(h) = v.winners.cuda_home {
        put(
            &mut out,
            &format!(
                "{} (via {})",
                h.path
                    .as_deref()
                    .map(|p| format!("{} → {}", printable(p), root_of(h.toolkit)))
                    .unwrap_or_else(|| "none".into()),
                printable(&h.via)
            ),
            "  torch extension builds: ",
            &value,
        );
    }
    if v.winners.libcudart.is_empty() {
        put(
            &mut out,
            "no libcudart on the search path",
            "  dynamic loader:         ",
            &value,
        );
    }
    for w in &v.winners.libcudart {
        put(
            &mut out,
            &format!(
                "{} → {}{}",
                w.soname,
                printable(w.path),
                w.version.map(|v| format!(" ({v})")).unwrap_or_default()
            ),
            "  dynamic loader:         ",
            &value,
        );
    }

    if let Some(sp) = v.search_path {
        put(&mut out, "", "", "");
        put(&mut out, &st.bold("Loader search order"), "", "");
        put(
            &mut out,
            &if sp.ld_library_path.is_empty() {
                "unset".to_string()
            } else {
                printable(&sp.ld_library_path.join(":")).into_owned()
            },
            "  LD_LIBRARY_PATH: ",
            "    ",
        );
        put(
            &mut out,
            &match sp.cache.get() {
                Some(c) => format!("{} entries ({} format)", c.entries, c.format.as_str()),
                None => fact_text(&sp.cache),
            },
            &format!("  {}: ", sp.cache.source),
            "    ",
        );
        put(
            &mut out,
            &sp.default_dirs.join(" "),
            "  default directories: ",
            "    ",
        );
        if let Some(wsl) = sp.wsl_lib_searched {
            put(
                &mut out,
                if wsl { "yes" } else { "no" },
                "  /usr/lib/wsl/lib searched: ",
                "    ",
            );
        }
    }

    put(&mut out, "", "", "");
    put(
        &mut out,
        &st.bold("CUDA libraries (→ = what the loader loads)"),
        "",
        "",
    );
    if v.libraries.is_empty() {
        put(&mut out, "none found", "  ", "");
    }
    for lib in v.libraries {
        let status = match lib.loaded() {
            Some(c) => st.green(&format!(
                "{}",
                c.version
                    .as_deref()
                    .map(printable)
                    .unwrap_or("found".into())
            )),
            None if lib.candidates.is_empty() => st.dim("not on the search path"),
            None => st.red("no loadable copy"),
        };
        put(
            &mut out,
            &format!("{}  {}", st.bold(&lib.soname), status),
            "  ",
            "    ",
        );
        for (i, c) in lib.candidates.iter().enumerate() {
            out.push_str(&candidate_line(c, lib.winner == Some(i), st, width));
            out.push('\n');
        }
        if verbose || lib.candidates.is_empty() {
            for c in &lib.elsewhere {
                out.push_str(&candidate_line(c, false, st, width));
                out.push('\n');
            }
        } else if !lib.elsewhere.is_empty() {
            put(
                &mut out,
                &st.dim(&format!(
                    "+ {} off the search path (pip wheels, conda, toolkits; -v lists them)",
                    lib.elsewhere.len()
                )),
                "      ",
                "        ",
            );
        }
    }

    put(&mut out, "", "", "");
    if v.findings.is_empty() {
        put(
            &mut out,
            &st.green("No toolkit or library problems found."),
            "",
            "",
        );
    }
    out.push_str(&super::human::findings_blocks(v.findings, st, width));
    if !v.findings.is_empty() {
        put(&mut out, "", "", "");
        put(&mut out, &st.dim(super::devices::FOCUSED_FOOTER), "", "");
    }
    out
}

pub fn render_markdown(v: &ToolkitView) -> String {
    let esc = super::markdown::cell;
    let mut out = String::from("## gpudoctor toolkit\n\n### CUDA toolkits\n\n");
    if v.toolkits.is_empty() {
        out.push_str("No CUDA toolkit found.\n");
    } else {
        out.push_str(
            "| root | version | found via | nvcc | compiles for |\n|---|---|---|---|---|\n",
        );
    }
    for e in &v.toolkits {
        let t = e.toolkit;
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            esc(&t.root),
            esc(&version_text(t)),
            t.found
                .iter()
                .map(|f| f.route.describe())
                .collect::<Vec<_>>()
                .join(", "),
            t.nvcc.as_deref().map(esc).unwrap_or_else(|| "none".into()),
            e.compiler_targets
                .as_ref()
                .map(|[a, b]| format!("{a} – {b}"))
                .unwrap_or_else(|| "unknown".into())
        ));
    }
    out.push_str("\n### CUDA libraries\n\n");
    if v.libraries.is_empty() {
        out.push_str("No CUDA library found.\n");
    } else {
        out.push_str("| soname | loaded | version | via |\n|---|---|---|---|\n");
    }
    for lib in v.libraries {
        let c = lib.loaded();
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            lib.soname,
            c.map(|c| format!("`{}`", esc(&c.path)))
                .unwrap_or_else(|| "—".into()),
            c.and_then(|c| c.version.as_deref())
                .map(esc)
                .unwrap_or_else(|| "—".into()),
            c.map(|c| c.via.describe()).unwrap_or("—")
        ));
    }
    out.push('\n');
    if v.findings.is_empty() {
        out.push_str("No toolkit or library problems found.\n");
    }
    out.push_str(&super::markdown::findings_section(v.findings));
    out
}
