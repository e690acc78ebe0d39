//! The documentation is checked like code: docs/codes.md and docs/environment.md are exactly
//! what the code's registries render (`UPDATE_DOCS=1 cargo test --test docs` rewrites them),
//! every relative link in README.md, CHANGELOG.md and docs/*.md reaches a file (and, for
//! Markdown targets, a heading) that exists, and the Slurm recipe in docs/fleet.md runs the
//! command lines tests/slurm.rs runs.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A generated page: rewritten under `UPDATE_DOCS=1`, else it must equal what the code renders.
fn generated(page: &str, want: String, source: &str) {
    let path = repo().join(page);
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, &want).unwrap_or_else(|e| panic!("write {page}: {e}"));
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    if have != want {
        let line = have
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| have.lines().count().min(want.lines().count()));
        panic!(
            "{page} differs from {source} (first at line {}).\n\
             Regenerate it with: UPDATE_DOCS=1 cargo test --test docs",
            line + 1
        );
    }
}

#[test]
fn codes_md_is_generated_from_the_registry() {
    generated(
        "docs/codes.md",
        gpudoctor::codes::reference_markdown(),
        "src/codes.rs and src/explain/",
    );
}

#[test]
fn environment_md_is_generated_from_the_registry() {
    generated(
        "docs/environment.md",
        gpudoctor::docs::environment_markdown(),
        "src/envvars.rs",
    );
}

#[test]
fn codes_md_lists_every_code_with_its_explanation() {
    let md = gpudoctor::codes::reference_markdown();
    for c in gpudoctor::codes::CODES {
        assert!(md.contains(&format!("\n## {}\n", c.code)), "{}", c.code);
        assert!(md.contains(&format!("[{}](#{})", c.code, c.code.to_ascii_lowercase())));
        let body = c.explanation.split_once('\n').unwrap().1.trim();
        assert!(md.contains(body), "{}'s explanation", c.code);
    }
}

/// README.md, CHANGELOG.md and every Markdown file under docs/.
fn documents() -> Vec<PathBuf> {
    let mut docs = vec![repo().join("README.md"), repo().join("CHANGELOG.md")];
    let mut pages: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .expect("docs/")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    docs.extend(pages);
    docs
}

/// The text outside fenced code blocks and inline code spans, where links are links.
fn prose(md: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in md.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut in_code = false;
        for ch in line.chars() {
            if ch == '`' {
                in_code = !in_code;
            } else if !in_code {
                out.push(ch);
            }
        }
        out.push('\n');
    }
    out
}

/// Targets of inline links `[text](target)` and images.
fn links(md: &str) -> Vec<String> {
    let text = prose(md);
    let mut found = Vec::new();
    let mut rest = text.as_str();
    while let Some(i) = rest.find("](") {
        let after = &rest[i + 2..];
        match after.find(')') {
            Some(j) => {
                let target = after[..j].split_whitespace().next().unwrap_or("");
                found.push(target.to_string());
                rest = &after[j..];
            }
            None => break,
        }
    }
    found
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens,
/// repeats numbered.
fn anchors(md: &str) -> HashSet<String> {
    let mut seen = HashSet::new();
    let mut fenced = false;
    for line in md.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#').trim();
        let slug: String = title
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let mut unique = slug.clone();
        let mut n = 1;
        while !seen.insert(unique.clone()) {
            unique = format!("{slug}-{n}");
            n += 1;
        }
    }
    seen
}

#[test]
fn relative_links_reach_existing_files_and_headings() {
    let mut broken = Vec::new();
    for doc in documents() {
        let md = std::fs::read_to_string(&doc).unwrap_or_else(|e| panic!("{}: {e}", doc.display()));
        let name = doc.strip_prefix(repo()).unwrap().display().to_string();
        for target in links(&md) {
            if target.is_empty()
                || target.starts_with("http://")
                || target.starts_with("https://")
                || target.starts_with("mailto:")
            {
                continue;
            }
            let (file, anchor) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target.as_str(), None),
            };
            let path = if file.is_empty() {
                doc.clone()
            } else {
                doc.parent().unwrap().join(file)
            };
            // fuzz/ is a package of its own, which `cargo package` leaves out of the crate:
            // links into it are checked in a checkout, where it exists.
            if !repo().join("fuzz").exists() && file.trim_start_matches("../").starts_with("fuzz/")
            {
                continue;
            }
            if !path.exists() {
                broken.push(format!("{name}: {target}: no file {}", path.display()));
                continue;
            }
            if let Some(anchor) = anchor {
                if path.extension().is_some_and(|e| e == "md") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    if !anchors(&text).contains(anchor) {
                        broken.push(format!("{name}: {target}: no heading #{anchor}"));
                    }
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_link_checker_sees_links_and_headings() {
    let md = "# A title (`x`)\n\nSee [b](b.md#c-d) and `[not](a link)`.\n```\n[no](code)\n```\n## A title (`x`)\n";
    assert_eq!(links(md), vec!["b.md#c-d"]);
    let a = anchors(md);
    assert!(
        a.contains("a-title-x") && a.contains("a-title-x-1"),
        "{a:?}"
    );
}

/// The fenced block of `lang` under the `## heading` of a docs page.
fn block_under(doc: &str, heading: &str, lang: &str) -> String {
    let heading = format!("\n## {heading}\n");
    let start = doc
        .find(&heading)
        .unwrap_or_else(|| panic!("no {heading:?}"));
    let section = &doc[start + heading.len()..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    let open = format!("```{lang}\n");
    let body = &section[section.find(&open).expect("a code block") + open.len()..];
    body[..body.find("```").expect("closed block")].to_string()
}

#[test]
fn the_slurm_recipe_runs_the_commands_tests_slurm_runs() {
    use clap::Parser;
    let doc = std::fs::read_to_string(repo().join("docs/fleet.md")).unwrap();
    let script = block_under(&doc, "Slurm", "sh");
    // Continuation lines joined, comments dropped: one shell command per line.
    let script = script.replace("\\\n", " ");
    let lines: Vec<&str> = script
        .lines()
        .map(str::trim)
        .filter(|l| l.contains("gpudoctor "))
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[0].starts_with("srun "), "{}", lines[0]);
    let check = lines[0]
        .trim_end_matches("|| true")
        .trim_end()
        .split_once("gpudoctor ")
        .unwrap()
        .1;
    assert_eq!(check, "check --format json --output \"$out/{host}.json\"");
    assert_eq!(lines[1], "gpudoctor fleet \"$out\"");
    for args in [
        vec![
            "gpudoctor",
            "check",
            "--format",
            "json",
            "--output",
            "out/{host}.json",
        ],
        vec!["gpudoctor", "fleet", "out"],
    ] {
        gpudoctor::cli::Cli::try_parse_from(&args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
    }
    // And these are what tests/slurm.rs runs under srun, then reads back with fleet.
    let test = std::fs::read_to_string(repo().join("tests/slurm.rs")).unwrap();
    for needle in [
        r#".args(["check", "--format", "json", "--output"])"#,
        r#".arg(reports.join("{host}.json"))"#,
        r#"gpudoctor().arg("fleet").arg(&reports)"#,
    ] {
        assert!(
            test.contains(needle),
            "tests/slurm.rs no longer runs {needle}"
        );
    }
}

#[test]
fn the_readme_set_up_commands_come_first_and_ci_runs_the_test_command() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let first_section = readme.find("\n## ").expect("a section");
    assert!(
        readme[first_section..].starts_with("\n## Set up on a fresh machine\n"),
        "the set-up section must be the README's first"
    );
    let blocks: Vec<&str> = readme
        .split("```sh\n")
        .skip(1)
        .map(|b| b[..b.find("```").unwrap()].trim())
        .take(2)
        .collect();
    assert_eq!(
        blocks,
        ["cargo run --release -- check", "cargo test --locked"]
    );
    let ci = std::fs::read_to_string(repo().join(".ci/run")).unwrap();
    assert!(
        ci.lines().any(|l| l.trim() == blocks[1]),
        ".ci/run must run the README's test command `{}`",
        blocks[1]
    );
}
