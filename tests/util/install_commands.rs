//! The Python install commands the repository tells users to type (`pip install …`, `uvx …`,
//! `pipx run …`, `uv tool install …`), and the distribution `pyproject.toml` builds, so that a
//! test can hold every such command to that distribution.

use std::path::Path;

/// The `[project] name` of pyproject.toml: the distribution the wheel is published as.
pub fn python_distribution(repo: &Path) -> String {
    let path = repo.join("pyproject.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let doc: toml::Table = text
        .parse()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    doc["project"]["name"]
        .as_str()
        .expect("pyproject.toml has [project] name")
        .to_string()
}

/// PEP 503's normalized form of a distribution name.
pub fn normalize(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// The file-name stem of a wheel of `dist` (the binary distribution format: `-` becomes `_`).
pub fn wheel_stem(dist: &str) -> String {
    normalize(dist).replace('-', "_")
}

/// One distribution an install command names: the line it is on and what it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    pub line: usize,
    /// The command from the installer's name to the end of its arguments.
    pub command: String,
    /// The requirement or wheel path as written.
    pub target: String,
}

/// Options of pip, uv and pipx that take a value (the value is not a requirement).
const VALUED: &[&str] = &[
    "-i",
    "--index-url",
    "--extra-index-url",
    "-f",
    "--find-links",
    "-c",
    "--constraint",
    "-r",
    "--requirement",
    "-t",
    "--target",
    "--python",
    "-p",
    "--prefix",
    "--root",
    "--cache-dir",
    "--index",
    "--default-index",
    "--with",
    "--pip-args",
    "--platform",
    "--python-version",
];

/// Where a command ends: a shell separator, a comment, the end of a code span or table cell.
fn command_words(rest: &str) -> Vec<&str> {
    let end = rest
        .find(['`', '|', ';', '#', '&', ')', '"', '\''])
        .unwrap_or(rest.len());
    rest[..end].split_whitespace().collect()
}

/// Every distribution named by a Python install or run command in `text`.
///
/// `pip install`, `pip3 install`, `python -m pip install`, `uv pip install`, `uv add` and
/// `pipx install` name requirements (every positional argument); `uvx`, `uv tool run`,
/// `uv tool install` and `pipx run` name one, given by `--from`/`--spec` or else as the first
/// positional argument. Placeholders in capitals (`DIST`, `WHEEL`) and shell variables are not
/// distributions.
pub fn named_distributions(text: &str) -> Vec<Named> {
    const STARTS: &[(&str, bool)] = &[
        // (the words that start the command, whether every positional is a requirement)
        ("pip install", true),
        ("pip3 install", true),
        ("uv pip install", true),
        ("uv add", true),
        ("pipx install", true),
        ("uvx", false),
        ("uv tool run", false),
        ("uv tool install", false),
        ("pipx run", false),
    ];
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for (start, all_positionals) in STARTS {
            let mut from = 0;
            while let Some(at) = line[from..].find(start) {
                let at = from + at;
                from = at + start.len();
                let before = line[..at].chars().next_back();
                let after = line[from..].chars().next();
                // A whole word: `uvx` not inside `cuvx`, `pip install` not inside `pipx`.
                if before.is_some_and(|c| c.is_alphanumeric() || c == '-' || c == '_')
                    || after.is_some_and(|c| !c.is_whitespace())
                {
                    continue;
                }
                let words = command_words(&line[from..]);
                let command = format!("{start} {}", words.join(" "));
                for target in targets(&words, *all_positionals) {
                    found.push(Named {
                        line: n + 1,
                        command: command.trim().to_string(),
                        target,
                    });
                }
            }
        }
    }
    found
}

fn targets(words: &[&str], all_positionals: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut explicit = false;
    while i < words.len() {
        let w = words[i];
        if let Some((opt, value)) = w.split_once('=').filter(|_| w.starts_with('-')) {
            if matches!(opt, "--from" | "--spec") {
                out.push(value.to_string());
                explicit = true;
            }
            i += 1;
            continue;
        }
        if matches!(w, "--from" | "--spec") {
            if let Some(v) = words.get(i + 1) {
                out.push(v.to_string());
                explicit = true;
            }
            i += 2;
            continue;
        }
        if VALUED.contains(&w) {
            i += 2;
            continue;
        }
        if w.starts_with('-') {
            i += 1;
            continue;
        }
        if !explicit {
            out.push(w.to_string());
        }
        if !all_positionals {
            break;
        }
        i += 1;
    }
    out.retain(|t| is_distribution(t));
    out
}

/// A requirement or wheel path, not a placeholder, a variable or a `.` (a checkout).
fn is_distribution(target: &str) -> bool {
    let name = target.trim_start_matches("./");
    !(name.is_empty()
        || name == "."
        || name.contains('$')
        || name.contains('<')
        || name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c == '_' || c == '-'))
}

/// The distribution a requirement or wheel path names: `gpudoctor-cli[x]==1` → `gpudoctor-cli`,
/// `dist/gpudoctor_cli-*_x86_64.whl` → `gpudoctor_cli`.
pub fn distribution_of(target: &str) -> String {
    if target.ends_with(".whl") || target.contains('/') {
        let file = target.rsplit('/').next().unwrap_or(target);
        return file.split('-').next().unwrap_or(file).to_string();
    }
    let end = target
        .find(|c: char| !(c.is_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .unwrap_or(target.len());
    target[..end].to_string()
}

/// Whether a distribution name is one of this project's (the tool's own names, any spelling).
pub fn is_ours(dist: &str) -> bool {
    let squashed: String = dist
        .chars()
        .filter(|c| !matches!(c, '-' | '_' | '.'))
        .collect::<String>()
        .to_ascii_lowercase();
    squashed.starts_with("gpudoctor")
}
