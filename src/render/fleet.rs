//! `gpudoctor fleet` as text, Markdown or JSON: the shape, the outliers, the findings by
//! code across nodes, the reports that could not be read, and (text) a recap of what to fix.

use super::width::{display_width, wrap, wrap_pieces, Piece};
use super::{printable, Style};
use crate::findings::Severity;
use crate::fleet::aggregate::{Count, Fleet};
use crate::verdict::Verdict;

/// The fleet as pretty JSON, written to `w` as it is serialised.
pub fn write_json(f: &Fleet, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *w, f)?;
    w.write_all(b"\n")
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
    // The last screen: what to fix first across the fleet, then the counts again.
    let recap = recap_blocks(f, st, width.min(super::width::PROSE_WIDTH));
    if !recap.is_empty() {
        out.push('\n');
        out.push_str(&super::recap::budgeted(
            &recap,
            st,
            width.min(super::width::PROSE_WIDTH),
        ));
        out.push('\n');
        put(&mut out, &st.bold(&headline_counts(f)), "", "  ");
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

/// "10 nodes: 1 with errors, 2 deviating, 1 with warnings, 6 clean".
fn headline_counts(f: &Fleet) -> String {
    let n = f.shape.nodes;
    format!(
        "{n} node{}: {}",
        if n == 1 { "" } else { "s" },
        f.counts_text()
    )
}

/// "node010", "node002, node007", "5 nodes (node001, node002, …)".
fn nodes_text(names: &[impl AsRef<str> + std::fmt::Display]) -> String {
    match names.len() {
        0..=3 => names
            .iter()
            .map(|n| n.as_ref())
            .collect::<Vec<_>>()
            .join(", "),
        n => format!("{n} nodes ({}, {}, …)", names[0], names[1]),
    }
}

/// The fleet's recap: each code that is a root cause on some node (errors, then the nodes
/// that deviate from their peers, then warnings), with the nodes and the first fix command —
/// the node it comes from when the command differs between nodes (a GPU index, a path).
fn recap_blocks(f: &Fleet, st: &Style, width: usize) -> Vec<String> {
    use super::recap::cut;
    let line = |mark: String, head: String, title: &str| {
        let head = format!("{mark} {head}: ");
        let room = width.saturating_sub(display_width(&st.text(&head)));
        format!("{head}{}\n", cut(&printable(title), room))
    };
    let group = |g: &crate::fleet::aggregate::FindingGroup| {
        let code = printable(&g.code);
        let (mark, code) = match g.severity {
            Severity::Error => (super::form::mark(Verdict::Error, st), st.red(&code)),
            _ => (super::form::mark(Verdict::Warning, st), st.yellow(&code)),
        };
        let mut out = line(
            mark,
            format!("{code} on {}", printable(&nodes_text(&g.node_names))),
            &g.title,
        );
        if let Some(fix) = &g.fix {
            let cmd = st.bold(&format!("$ {}", printable(&fix.command)));
            let prefix = if fix.same_on_every_node || g.nodes == 1 {
                "    ".to_string()
            } else {
                format!("    {} ", st.dim(&format!("{}:", printable(&fix.node))))
            };
            out.push_str(&wrap_pieces(&[Piece::Whole(&cmd)], width, &prefix, "    "));
            out.push('\n');
        }
        out
    };
    let roots = |sev: Severity| {
        f.findings
            .iter()
            .filter(move |g| g.severity == sev && g.explained_nodes < g.nodes)
    };
    let mut blocks: Vec<String> = roots(Severity::Error).map(group).collect();
    // Deviations, one line per difference shared by several nodes.
    let mut alike: Vec<(&str, &str, &str, Vec<String>)> = Vec::new();
    for o in &f.outliers {
        match alike
            .iter_mut()
            .find(|(w, v, p, _)| *w == o.what && *v == o.value && *p == o.peers)
        {
            Some(a) => a.3.push(o.node.clone()),
            None => alike.push((&o.what, &o.value, &o.peers, vec![o.node.clone()])),
        }
    }
    for (what, value, peers, nodes) in alike {
        let mark = st.yellow("≠");
        blocks.push(line(
            mark,
            printable(&nodes_text(&nodes)).into_owned(),
            &format!("{what} {value} (peers: {peers})"),
        ));
    }
    blocks.extend(roots(Severity::Warning).map(group));
    blocks
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
