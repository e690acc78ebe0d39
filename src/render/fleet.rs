//! `gpudoctor fleet` as text, Markdown or JSON: the shape, the outliers, the findings by
//! code across nodes, and the reports that could not be read.

use super::width::wrap;
use super::{printable, Style};
use crate::fleet::aggregate::{Count, Fleet};

pub fn render_json(f: &Fleet) -> String {
    super::json::pretty(f, "fleet")
}

fn counts(c: &[Count]) -> String {
    c.iter()
        .map(|c| {
            format!(
                "{} ({} node{})",
                c.value,
                c.nodes,
                if c.nodes == 1 { "" } else { "s" }
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The shape as (label, text) rows, shared by the text and Markdown views.
fn shape_rows(sh: &crate::fleet::aggregate::Shape) -> [(&'static str, String); 6] {
    let models = sh
        .gpus_by_model
        .iter()
        .map(|m| {
            format!(
                "{} × {} ({} node{})",
                m.gpus,
                m.model,
                m.nodes,
                if m.nodes == 1 { "" } else { "s" }
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    [
        ("GPUs", models),
        ("GPUs per node", counts(&sh.gpu_counts)),
        ("drivers", counts(&sh.drivers)),
        ("CUDA (driver)", counts(&sh.cuda)),
        ("toolkits", counts(&sh.toolkits)),
        ("torch", counts(&sh.torch)),
    ]
}

/// ", 2 report(s) unusable, 1 duplicate report(s)" — duplicates are counted once, not lost.
fn problem_counts(f: &Fleet) -> String {
    let duplicates = f.duplicate_reports();
    let unusable = f.unusable_reports();
    let mut s = String::new();
    if unusable > 0 {
        s.push_str(&format!(", {unusable} report(s) unusable"));
    }
    if duplicates > 0 {
        s.push_str(&format!(", {duplicates} duplicate report(s)"));
    }
    s
}

/// "… and 999,900 more not listed (not_a_report: 999,900)": the list is capped, the count
/// is not.
fn not_listed(f: &Fleet) -> Option<String> {
    if f.problems_not_listed == 0 {
        return None;
    }
    let kinds = f
        .problems_by_kind
        .iter()
        .map(|(k, n)| format!("{k}: {n}"))
        .collect::<Vec<_>>()
        .join(", ");
    Some(format!(
        "… and {} more not listed (all {} by kind: {kinds})",
        f.problems_not_listed,
        f.problems.len() + f.problems_not_listed
    ))
}

/// `gpudoctor fleet` for a terminal (ASCII where it needs it).
pub fn render_human(f: &Fleet, st: &Style, width: usize) -> String {
    st.finish(human_text(f, st, width))
}

fn human_text(f: &Fleet, st: &Style, width: usize) -> String {
    let mut out = String::new();
    // One line of text, wrapped to the width under `indent`.
    let put = |out: &mut String, text: &str, prefix: &str, indent: &str| {
        out.push_str(&wrap(text, width, prefix, indent));
        out.push('\n');
    };
    let sh = &f.shape;
    put(
        &mut out,
        &st.bold(&format!(
            "Fleet: {} node{}, {} GPU{} — {}{}",
            sh.nodes,
            if sh.nodes == 1 { "" } else { "s" },
            sh.gpus,
            if sh.gpus == 1 { "" } else { "s" },
            f.counts_text(),
            problem_counts(f)
        )),
        "",
        "  ",
    );
    out.push('\n');
    // "  GPUs per node  " — values wrap under the value column.
    let value = " ".repeat(17);
    for (label, v) in shape_rows(sh) {
        put(&mut out, &printable(&v), &format!("  {label:<14} "), &value);
    }
    if let (Some(a), Some(b)) = (&sh.oldest_report, &sh.newest_report) {
        let span = if a == b {
            a.clone()
        } else {
            format!("{a} … {b}")
        };
        put(
            &mut out,
            &printable(&span),
            &format!("  {:<14} ", "reports from"),
            &value,
        );
    }

    if !f.outliers.is_empty() {
        out.push('\n');
        put(
            &mut out,
            &st.bold("Outliers (differ from the nodes with the same GPU model)"),
            "",
            "",
        );
        for o in &f.outliers {
            put(
                &mut out,
                &format!(
                    "{} {:<10} {}  (peers: {}; {} other {} node{})",
                    st.yellow(&printable(&o.node)),
                    o.what,
                    printable(&o.value),
                    printable(&o.peers),
                    o.peer_nodes,
                    printable(&o.group),
                    if o.peer_nodes == 1 { "" } else { "s" }
                ),
                "  ",
                "      ",
            );
        }
    }

    if !f.findings.is_empty() {
        out.push('\n');
        put(&mut out, &st.bold("Findings by code (worst first)"), "", "");
        for g in &f.findings {
            put(
                &mut out,
                &format!(
                    "{} on {} of {} node{}: {}",
                    super::form::finding_heading(g.severity, &printable(&g.code), st),
                    g.nodes,
                    sh.nodes,
                    if sh.nodes == 1 { "" } else { "s" },
                    printable(&Fleet::names_line(&g.node_names)),
                ),
                "  ",
                "      ",
            );
            put(&mut out, &st.dim(&printable(&g.title)), "      ", "      ");
            if let Some(why) = caused_line(g) {
                put(&mut out, &printable(&why), "      ", "      ");
            }
        }
    }

    if !f.identity.is_empty() {
        out.push('\n');
        put(&mut out, &st.bold("Node identities"), "", "");
        for n in &f.identity {
            put(
                &mut out,
                &format!("{} {}", st.yellow(&n.kind), printable(&n.detail)),
                "  ",
                "    ",
            );
        }
    }

    if !f.problems.is_empty() {
        out.push('\n');
        put(&mut out, &st.bold("Reports not used"), "", "");
        for p in &f.problems {
            put(
                &mut out,
                &format!(
                    "{} {}: {}",
                    st.red(&p.kind),
                    printable(&p.source),
                    printable(&p.detail)
                ),
                "  ",
                "    ",
            );
        }
        if let Some(rest) = not_listed(f) {
            put(&mut out, &st.dim(&rest), "  ", "    ");
        }
    }
    if sh.nodes == 0 {
        out.push('\n');
        put(
            &mut out,
            &st.red("No usable node report: nothing was checked."),
            "",
            "",
        );
    } else if f.findings.is_empty()
        && f.outliers.is_empty()
        && f.problems.is_empty()
        && f.identity.is_empty()
    {
        out.push('\n');
        put(
            &mut out,
            &st.green("Every node is healthy and alike."),
            "",
            "",
        );
    }
    out
}

pub fn render_markdown(f: &Fleet) -> String {
    let cell = |s: &str| printable(s).replace('|', "\\|");
    let mut out = String::from("# gpudoctor fleet\n\n");
    let sh = &f.shape;
    out.push_str(&format!(
        "**{} nodes, {} GPUs** — {}{}.\n\n",
        sh.nodes,
        sh.gpus,
        f.counts_text(),
        problem_counts(f)
    ));
    if sh.nodes == 0 {
        out.push_str("**No usable node report: nothing was checked.**\n\n");
    }
    out.push_str("| | |\n|---|---|\n");
    for (label, value) in shape_rows(sh) {
        out.push_str(&format!("| {label} | {} |\n", cell(&value)));
    }
    if !f.outliers.is_empty() {
        out.push_str(
            "\n## Outliers\n\n| node | what | value | peers | group |\n|---|---|---|---|---|\n",
        );
        for o in &f.outliers {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} |\n",
                cell(&o.node),
                o.what,
                cell(&o.value),
                cell(&o.peers),
                cell(&o.group)
            ));
        }
    }
    if !f.findings.is_empty() {
        out.push_str("\n## Findings by code\n\n| code | severity | nodes | title | which |\n|---|---|---|---|---|\n");
        for g in &f.findings {
            out.push_str(&format!(
                "| {} | {} | {} of {} | {}{} | {} |\n",
                cell(&g.code),
                g.severity.as_str(),
                g.nodes,
                sh.nodes,
                cell(&g.title),
                caused_line(g).map_or(String::new(), |w| format!(" ({})", cell(&w))),
                cell(&Fleet::names_line(&g.node_names))
            ));
        }
    }
    if !f.identity.is_empty() {
        out.push_str("\n## Node identities\n\n| kind | nodes | detail |\n|---|---|---|\n");
        for n in &f.identity {
            out.push_str(&format!(
                "| {} | {} | {} |\n",
                n.kind,
                cell(&n.nodes.join(", ")),
                cell(&n.detail)
            ));
        }
    }
    if !f.problems.is_empty() {
        out.push_str("\n## Reports not used\n\n| report | problem | detail |\n|---|---|---|\n");
        for p in &f.problems {
            out.push_str(&format!(
                "| {} | {} | {} |\n",
                cell(&p.source),
                p.kind,
                cell(&p.detail)
            ));
        }
        if let Some(rest) = not_listed(f) {
            out.push_str(&format!("\n{rest}\n"));
        }
    }
    out
}

/// "caused by GD018 on 3 of them": where a root cause on the node explains the finding.
pub(crate) fn caused_line(g: &crate::fleet::aggregate::FindingGroup) -> Option<String> {
    if g.caused_by.is_empty() {
        return None;
    }
    let on = if g.explained_nodes == g.nodes {
        "on every one".to_string()
    } else {
        format!("on {} of them", g.explained_nodes)
    };
    Some(format!("caused by {} {on}", g.caused_by.join(", ")))
}
