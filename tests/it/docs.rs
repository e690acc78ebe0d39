//! The documentation is checked like code: docs/codes.md and docs/environment.md are exactly
//! what the code's registries render (`UPDATE_DOCS=1 cargo test --test it docs::` rewrites them),
//! every relative link in README.md, CHANGELOG.md and docs/*.md reaches a file (and, for
//! Markdown targets, a heading) that exists, and the Slurm recipe in docs/fleet.md runs the
//! command lines tests/it/slurm.rs runs. Every Python install command in the repository names the
//! distribution pyproject.toml builds.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::util::install_commands::{
    distribution_of, is_ours, named_distributions, normalize, python_distribution, wheel_stem,
};

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
             Regenerate it with: UPDATE_DOCS=1 cargo test --test it docs::",
            line + 1
        );
    }
}

#[test]
fn codes_md_is_generated_from_the_registry() {
    generated(
        "docs/codes.md",
        gpudoctor::docs::codes_markdown(),
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
    let md = gpudoctor::docs::codes_markdown();
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
    // And these are what tests/it/slurm.rs runs under srun, then reads back with fleet.
    let test = std::fs::read_to_string(repo().join("tests/it/slurm.rs")).unwrap();
    for needle in [
        r#".args(["check", "--format", "json", "--output"])"#,
        r#".arg(reports.join("{host}.json"))"#,
        r#"gpudoctor().arg("fleet").arg(&reports)"#,
    ] {
        assert!(
            test.contains(needle),
            "tests/it/slurm.rs no longer runs {needle}"
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

/// Every text file of the repository a user may read a command in (docs, README, man page,
/// recipes, scripts, the source's own messages and the tests' expectations).
fn text_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if !matches!(
                name.as_str(),
                "target" | ".git" | "__pycache__" | "snapshots"
            ) {
                text_files(&path, out);
            }
        } else if std::fs::metadata(&path).is_ok_and(|m| m.len() < 4 << 20) {
            out.push(path);
        }
    }
}

#[test]
fn every_python_install_command_names_the_distribution_pyproject_builds() {
    let dist = python_distribution(repo());
    let mut files = Vec::new();
    text_files(repo(), &mut files);
    // These two hold the wrong names on purpose, as test vectors.
    let vectors = [
        repo().join("tests/it/docs.rs"),
        repo().join("tests/util/install_commands.rs"),
    ];
    let mut wrong = Vec::new();
    let mut right = 0;
    for path in files.iter().filter(|p| !vectors.contains(p)) {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        for named in named_distributions(&text) {
            let target = distribution_of(&named.target);
            if !is_ours(&target) {
                continue;
            }
            let is_wheel = named.target.ends_with(".whl");
            if (is_wheel && target == wheel_stem(&dist))
                || (!is_wheel && normalize(&target) == normalize(&dist))
            {
                right += 1;
            } else {
                wrong.push(format!(
                    "{}:{}: `{}` installs {:?}, but pyproject.toml builds {dist:?}",
                    path.strip_prefix(repo()).unwrap().display(),
                    named.line,
                    named.command,
                    named.target
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // README's install line and docs/install.md's table, at least.
    assert!(right >= 4, "only {right} install commands found");
}

fn targets_of(text: &str) -> Vec<String> {
    named_distributions(text)
        .into_iter()
        .map(|n| n.target)
        .collect()
}

#[test]
fn the_install_command_reader_finds_each_installers_distribution() {
    assert_eq!(targets_of("pip install gpudoctor"), ["gpudoctor"]);
    assert_eq!(
        targets_of("`uvx gpudoctor check` or `pipx run gpudoctor check`"),
        ["gpudoctor", "gpudoctor"]
    );
    assert_eq!(
        targets_of("uvx --from gpudoctor-cli gpudoctor check"),
        ["gpudoctor-cli"]
    );
    assert_eq!(
        targets_of("pipx run --spec=gpudoctor-cli gpudoctor check"),
        ["gpudoctor-cli"]
    );
    assert_eq!(
        targets_of(
            "python -m pip install -U --index-url https://x/simple torch gpudoctor-cli==0.1"
        ),
        ["torch", "gpudoctor-cli==0.1"]
    );
    assert_eq!(
        targets_of("| pip | `pip install dist/gpudoctor_cli-*_x86_64.whl` |"),
        ["dist/gpudoctor_cli-*_x86_64.whl"]
    );
    assert_eq!(
        targets_of("uv tool install gpudoctor-cli"),
        ["gpudoctor-cli"]
    );
    // Not commands: placeholders, variables, other words.
    assert!(targets_of("pip install DIST; uvx --from WHEEL gpudoctor").is_empty());
    assert!(targets_of("pip install \"$wheel\"; cargo install gpudoctor").is_empty());
    assert!(targets_of("the pipx installs; cuvx gpudoctor").is_empty());

    assert_eq!(
        distribution_of("gpudoctor-cli[extra]>=0.1"),
        "gpudoctor-cli"
    );
    assert_eq!(distribution_of("dist/gpudoctor-*_x86_64.whl"), "gpudoctor");
    assert_eq!(normalize("GpuDoctor__CLI"), "gpudoctor-cli");
    assert_eq!(wheel_stem("gpudoctor-cli"), "gpudoctor_cli");
    assert!(is_ours("gpu-doctor") && is_ours("gpudoctor_cli") && !is_ours("torch"));
}

#[test]
fn the_install_check_fails_on_the_old_name() {
    // What the README said before the distribution was renamed: all three are caught.
    let old = "pip install gpudoctor        # or run it without installing: uvx gpudoctor check\n\
               | no environment at hand (pipx) | `pipx run gpudoctor check` |";
    let dist = python_distribution(repo());
    let caught: Vec<_> = named_distributions(old)
        .into_iter()
        .filter(|n| normalize(&distribution_of(&n.target)) != normalize(&dist))
        .collect();
    assert_eq!(caught.len(), 3, "{caught:?}");
}
