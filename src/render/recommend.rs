//! `gpudoctor recommend`: the machine, then per package the command to run and why. The
//! marks repeat the recommender's verdicts (chosen ✓, passed over ✗); nothing is judged here.
//! Names, paths and reasons come from the machine: every one is shown through `printable`.

use serde_json::json;

use super::width::wrap;
use super::{printable as shown, Style};
use crate::recommend::{Machine, Recommendation};

pub fn render_human(
    m: &Machine,
    recs: &[Recommendation],
    st: &Style,
    width: usize,
    verbose: bool,
) -> String {
    let mut out = String::new();
    out.push_str(&wrap(
        &format!("For: {}", shown(&m.summary())),
        width,
        "",
        "     ",
    ));
    out.push('\n');
    for r in recs {
        out.push('\n');
        match &r.pick {
            Some(p) => {
                out.push_str(&wrap(
                    &st.bold(&format!("{}: {}", shown(&r.package), shown(&p.label))),
                    width,
                    "",
                    "  ",
                ));
                out.push('\n');
                if let Some(c) = r.commands.first() {
                    for l in &c.lines {
                        // Commands stay whole: a wrapped command cannot be pasted.
                        out.push_str(&format!("  {}\n", st.cyan(&shown(l))));
                    }
                    if let Some(f) = &c.project {
                        let lead = if c.lines.is_empty() { "In" } else { "Or, in" };
                        out.push_str(&format!(
                            "  {lead} a {} project: add to {}\n",
                            c.installer.name(),
                            shown(&f.path)
                        ));
                        for l in f.text.lines() {
                            out.push_str(&format!("    {}\n", shown(l)));
                        }
                        out.push_str(&format!("  then: {}\n", st.cyan(&shown(&f.command))));
                    }
                }
                out.push_str(&wrap(
                    &format!("Why: {}.", shown(&p.reason)),
                    width,
                    "  ",
                    "    ",
                ));
                out.push('\n');
            }
            None => {
                out.push_str(&wrap(
                    &st.red(&format!("{}: nothing fits this machine", shown(&r.package))),
                    width,
                    "",
                    "  ",
                ));
                out.push('\n');
                for c in &r.must_change {
                    let then = c
                        .then
                        .as_deref()
                        .map(|t| format!(" → {}", shown(t)))
                        .unwrap_or_default();
                    out.push_str(&wrap(
                        &format!("Needs {}{then}", shown(&c.what)),
                        width,
                        "  ",
                        "    ",
                    ));
                    out.push('\n');
                }
            }
        }
        for n in &r.notes {
            out.push_str(&wrap(&shown(n), width, "  ", "  "));
            out.push('\n');
        }
        if !r.considered.is_empty() && (verbose || r.pick.is_none() || r.considered.len() > 1) {
            out.push_str("  Considered:\n");
            // Candidates passed over for the same reasons share a line.
            let mut groups: Vec<(Vec<&str>, &[String], bool)> = Vec::new();
            for c in &r.considered {
                match groups.iter_mut().find(|(_, why, chosen)| {
                    !c.chosen && !*chosen && *why == c.rejected_because.as_slice()
                }) {
                    Some(g) => g.0.push(&c.candidate),
                    None => groups.push((vec![&c.candidate], &c.rejected_because, c.chosen)),
                }
            }
            for (labels, why, chosen) in groups {
                let mark = if chosen {
                    st.green("✓")
                } else {
                    st.red("✗")
                };
                let why = if chosen {
                    "chosen".to_string()
                } else {
                    shown(&why.join("; ")).into_owned()
                };
                let head = format!("    {mark} {}: ", shown(&labels_text(&labels)));
                out.push_str(&wrap(&why, width, &head, "        "));
                out.push('\n');
            }
            if r.not_listed > 0 {
                out.push_str(&format!(
                    "    … and {} older builds, each passed over too\n",
                    r.not_listed
                ));
            }
        }
    }
    st.finish(out)
}

/// "torch 2.15.0+cu132, 2.14.1+cu132" — the shared first word once; many as "first … last (N)".
fn labels_text(labels: &[&str]) -> String {
    let first_word = |l: &str| l.split(' ').next().unwrap_or("").to_string();
    let head = first_word(labels[0]);
    let same = labels
        .iter()
        .all(|l| first_word(l) == head && l.contains(' '));
    let short: Vec<&str> = labels
        .iter()
        .map(|l| {
            if same {
                l.split_once(' ').map_or(*l, |(_, r)| r)
            } else {
                l
            }
        })
        .collect();
    let body = if short.len() > 4 {
        format!(
            "{} … {} ({} builds)",
            short[0],
            short[short.len() - 1],
            short.len()
        )
    } else {
        short.join(", ")
    };
    if same {
        format!("{head} {body}")
    } else {
        body
    }
}

pub fn render_json(m: &Machine, recs: &[Recommendation]) -> String {
    let mut s = serde_json::to_string_pretty(&json!({
        "schema_version": crate::report::SCHEMA_VERSION,
        "machine": m,
        "recommendations": recs,
    }))
    .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}

pub fn render_markdown(m: &Machine, recs: &[Recommendation]) -> String {
    let mut out = format!("**For:** {}\n", shown(&m.summary()));
    for r in recs {
        match &r.pick {
            Some(p) => {
                out.push_str(&format!(
                    "\n### {}: {}\n\n",
                    shown(&r.package),
                    shown(&p.label)
                ));
                if let Some(c) = r.commands.first() {
                    if !c.lines.is_empty() {
                        out.push_str("```sh\n");
                        for l in &c.lines {
                            out.push_str(&shown(l));
                            out.push('\n');
                        }
                        out.push_str("```\n");
                    }
                    if let Some(f) = &c.project {
                        out.push_str(&format!(
                            "\nIn a {} project, add to `{}`:\n\n```toml\n{}```\n\nthen `{}`\n",
                            c.installer.name(),
                            shown(&f.path),
                            f.text
                                .lines()
                                .map(|l| format!("{}\n", shown(l)))
                                .collect::<String>(),
                            shown(&f.command)
                        ));
                    }
                }
                out.push_str(&format!("\nWhy: {}.\n", shown(&p.reason)));
            }
            None => {
                out.push_str(&format!(
                    "\n### {}: nothing fits this machine\n\n",
                    shown(&r.package)
                ));
                for c in &r.must_change {
                    let then = c
                        .then
                        .as_deref()
                        .map(|t| format!(" → {}", shown(t)))
                        .unwrap_or_default();
                    out.push_str(&format!("- Needs {}{then}\n", shown(&c.what)));
                }
            }
        }
        for n in &r.notes {
            out.push_str(&format!("\n{}\n", shown(n)));
        }
        if !r.considered.is_empty() {
            out.push_str("\n| candidate | verdict |\n|---|---|\n");
            for c in &r.considered {
                let v = if c.chosen {
                    "✓ chosen".to_string()
                } else {
                    format!("✗ {}", c.rejected_because.join("; "))
                };
                out.push_str(&format!(
                    "| {} | {} |\n",
                    super::markdown::cell(&c.candidate),
                    super::markdown::cell(&v)
                ));
            }
        }
    }
    out
}
