//! The layers of src/ (docs/architecture.md): probes gather facts (the data model in src/facts/), rules judge them, renderers
//! show findings, and the shared libraries (versions, the loader, the registries) serve all of
//! them. A file that reaches into a layer it must not fails here. The dependencies that are
//! still there are listed by name, so a new one fails and a removed one must leave the list.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Whether `text` names module `crate::layer` (a path or a grouped import).
fn names_layer(text: &str, layer: &str) -> bool {
    let path = format!("crate::{layer}");
    let direct = text.match_indices(&path).any(|(i, _)| {
        !text[i + path.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
    });
    let grouped = text.match_indices("crate::{").any(|(i, _)| {
        let rest = &text[i + "crate::{".len()..];
        let group = &rest[..rest.find('}').unwrap_or(rest.len())];
        group
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|w| w == layer)
    });
    direct || grouped
}

/// Files under src/`under` (relative to src/) that name any of `layers`.
fn offenders(under: &str, layers: &[&str]) -> BTreeSet<String> {
    let mut files = Vec::new();
    rust_files(&src().join(under), &mut files);
    files
        .into_iter()
        .filter(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            layers.iter().any(|l| names_layer(&text, l))
        })
        .map(|p| p.strip_prefix(src()).unwrap().display().to_string())
        .collect()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
fn probes_use_neither_rules_nor_renderers() {
    assert_eq!(offenders("probes", &["rules", "render", "cli"]), set(&[]));
}

#[test]
fn the_facts_stand_alone() {
    // The data model is read by every layer and reads none of them.
    assert_eq!(
        offenders("facts", &["probes", "rules", "render", "cli"]),
        set(&[])
    );
}

#[test]
fn rules_and_renderers_read_facts_not_probes() {
    assert_eq!(offenders("rules", &["probes", "render", "cli"]), set(&[]));
    // Renderers read the rules' results (Check, CheckStatus) and the findings, not the CLI.
    assert_eq!(offenders("render", &["probes", "cli"]), set(&[]));
    // The judging and presenting layers beside them read facts too.
    for judged in ["diff", "fleet", "recommend", "explain"] {
        assert_eq!(offenders(judged, &["probes"]), set(&[]), "src/{judged}");
    }
}

#[test]
fn workers_own_their_wire_types() {
    // The child processes (NVML, the smoke test) define what they send; their parent probes
    // read it from them, never the other way round.
    assert_eq!(offenders("smoke", &["probes", "rules", "render"]), set(&[]));
}

#[test]
fn renderers_do_not_read_the_clock() {
    let mut files = Vec::new();
    rust_files(&src().join("render"), &mut files);
    // The smoke test's live line is drawn while the check runs: its ticker times the steps.
    let live = src().join("render/smoke_progress.rs");
    assert!(live.exists());
    for p in files.into_iter().filter(|p| *p != live) {
        let text = std::fs::read_to_string(&p).unwrap();
        for clock in ["SystemTime::now", "Instant::now"] {
            assert!(
                !text.contains(clock),
                "{} reads the clock ({clock}): take the time as an argument",
                p.display()
            );
        }
    }
}

#[test]
fn the_shared_libraries_stay_below_every_layer() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let top: Vec<PathBuf> = files
        .into_iter()
        .filter(|p| p.parent() == Some(src().as_path()))
        .filter(|p| !matches!(p.file_name().unwrap().to_str(), Some("lib.rs" | "main.rs")))
        .collect();
    let mut found = BTreeSet::new();
    for p in &top {
        let text = std::fs::read_to_string(p).unwrap();
        for layer in ["probes", "rules", "render", "cli"] {
            if names_layer(&text, layer) {
                found.insert(format!(
                    "{} -> {layer}",
                    p.file_name().unwrap().to_str().unwrap()
                ));
            }
        }
    }
    // The verdicts, the headline and the report join facts and rules' findings; the unit
    // tests' snapshots are built from probes' parsers and checked against the rules.
    assert_eq!(
        found,
        set(&[
            "headline.rs -> rules",
            "report.rs -> rules",
            "testing.rs -> probes",
            "testing.rs -> rules",
            "verdict.rs -> rules",
        ])
    );
}

#[test]
fn the_layer_test_sees_grouped_imports() {
    assert!(names_layer("use crate::{codes, probes::nvml};", "probes"));
    assert!(names_layer("crate::render::term::ascii_only", "render"));
    assert!(!names_layer("crate::rendered", "render"));
    assert!(!names_layer("use crate::{codes, envvars};", "render"));
}

/// A code is written as its constant (`codes::GD033`), so a misspelt one does not compile;
/// the literals left are the registry's own tests of code parsing and one unregistered code.
#[test]
fn finding_codes_are_named_by_their_constants() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut literals = BTreeSet::new();
    for p in &files {
        let text = std::fs::read_to_string(p).unwrap();
        let b = text.as_bytes();
        for (i, _) in text.match_indices("\"GD0") {
            let lit = &b[i..(i + 7).min(b.len())];
            if lit.len() == 7 && lit[4..6].iter().all(u8::is_ascii_digit) && lit[6] == b'"' {
                let rel = p.strip_prefix(src()).unwrap().display().to_string();
                literals.insert(format!("{rel} {}", &text[i..i + 7]));
            }
        }
    }
    assert_eq!(
        literals,
        set(&["codes.rs \"GD012\"", "render/fix_script.rs \"GD099\"",])
    );
}
