//! `gpudoctor fleet --format html`: one self-contained page — the verdict, the fleet's shape,
//! a heat map of nodes × finding codes grouped by GPU model, the outliers, the findings by
//! code, and the reports that could not be used. Every mark comes from the nodes' findings
//! and the fleet's aggregate; nothing here judges.
//!
//! The page stays bounded: nodes whose rows would be identical (same model, same findings,
//! same differences from their peers) share one row that lists their names, and each
//! distinct finding (code, title, evidence, fix) is written once and linked from its cells.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use super::html::{esc, mark, page};
use crate::findings::{Evidence, Fix, Severity};
use crate::fleet::aggregate::{Fleet, NodeFacts, Outlier};
use crate::fleet::natural_cmp;

/// Node names written in a shared row's list before "… and N more".
const NAMES_IN_ROW: usize = 2_000;
/// Rows with at most this many nodes name them all without a click.
const NAMES_SHOWN: usize = 6;
/// Heat-map rows per page: the first page is open, the others are closed until opened.
const PAGE_ROWS: usize = 500;

/// One distinct finding: what a heat-map cell links to.
struct Detail<'a> {
    code: &'a str,
    severity: Severity,
    title: &'a str,
    evidence: &'a [Evidence],
    fix: &'a [Fix],
    nodes: usize,
}

/// What makes two findings one detail: everything the detail shows.
type DetailKey<'a> = (&'a str, Severity, &'a str, &'a [Evidence], &'a [Fix]);

/// What makes two nodes share a row: the model, each column's finding, and what differs
/// from the peers (what, value).
type RowKey<'a> = (&'a str, Vec<Option<usize>>, Vec<(&'a str, &'a str)>);

/// Nodes that share a row.
struct Row<'a> {
    model: &'a str,
    /// Per heat-map column: the detail index of the node's finding with that code.
    cells: Vec<Option<usize>>,
    outliers: Vec<&'a Outlier>,
    nodes: Vec<&'a NodeFacts>,
    worst: Option<Severity>,
}

pub fn render(f: &Fleet) -> String {
    let mut outliers_of: HashMap<&str, Vec<&Outlier>> = HashMap::new();
    for o in &f.outliers {
        outliers_of.entry(o.node.as_str()).or_default().push(o);
    }
    // The heat map's columns: the codes of the fleet's findings, worst and commonest first
    // (the aggregate's order), each once.
    let mut columns: Vec<&str> = Vec::new();
    for g in &f.findings {
        if !columns.contains(&g.code.as_str()) {
            columns.push(&g.code);
        }
    }
    let column_of: HashMap<&str, usize> =
        columns.iter().enumerate().map(|(i, c)| (*c, i)).collect();

    let mut details: Vec<Detail> = Vec::new();
    let mut detail_index: HashMap<DetailKey, usize> = HashMap::new();
    let mut rows: Vec<Row> = Vec::new();
    let mut row_index: HashMap<RowKey, usize> = HashMap::new();
    for n in &f.nodes {
        let found = &n.findings;
        let mut cells: Vec<Option<usize>> = vec![None; columns.len()];
        for fi in found {
            let Some(&col) = column_of.get(fi.code.as_str()) else {
                continue;
            };
            // Evidence and fix make a finding distinct: two nodes share a detail only when
            // everything it shows is the same.
            let key = (
                fi.code.as_str(),
                fi.severity,
                fi.title.as_str(),
                fi.evidence.as_slice(),
                fi.fix.as_slice(),
            );
            let idx = *detail_index.entry(key).or_insert_with(|| {
                details.push(Detail {
                    code: &fi.code,
                    severity: fi.severity,
                    title: &fi.title,
                    evidence: &fi.evidence,
                    fix: &fi.fix,
                    nodes: 0,
                });
                details.len() - 1
            });
            details[idx].nodes += 1;
            // Two findings with one code on a node: the cell shows the worse.
            let worse = match cells[col] {
                Some(old) => details[old].severity < fi.severity,
                None => true,
            };
            if worse {
                cells[col] = Some(idx);
            }
        }
        let outliers = outliers_of.get(&*n.name).cloned().unwrap_or_default();
        let key = (
            &*n.gpu_model,
            cells.clone(),
            outliers
                .iter()
                .map(|o| (o.what.as_str(), o.value.as_str()))
                .collect::<Vec<_>>(),
        );
        let worst = found.iter().map(|f| f.severity).max();
        match row_index.get(&key) {
            Some(&i) => rows[i].nodes.push(n),
            None => {
                row_index.insert(key, rows.len());
                rows.push(Row {
                    model: &n.gpu_model,
                    cells,
                    outliers,
                    nodes: vec![n],
                    worst,
                });
            }
        }
    }

    let mut body = String::new();
    header(&mut body, f);
    // What an admin reads first: which findings, on how many nodes.
    by_code(&mut body, f);
    heat_map(&mut body, f, &columns, &rows, &details);
    outliers(&mut body, f);
    shape(&mut body, f);
    finding_details(&mut body, &details);
    problems(&mut body, f);
    let sh = &f.shape;
    page(
        &format!(
            "gpudoctor fleet: {} node{}, {} with errors",
            sh.nodes,
            plural(sh.nodes),
            f.nodes_with_errors
        ),
        &body,
    )
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The verdict line: its mark is the worst of the counts under it.
fn header(out: &mut String, f: &Fleet) {
    let sh = &f.shape;
    let unusable = f.unusable_reports();
    let (class, mark) = match f.verdict() {
        Some(Severity::Error) => ("e", "✗"),
        Some(Severity::Warning) => ("w", "!"),
        _ => ("ok", "✓"),
    };
    let _ = write!(
        out,
        "<h1>gpudoctor fleet</h1>\n<p class=\"dim\">gpudoctor {}",
        esc(f.gpudoctor_version)
    );
    if let (Some(a), Some(b)) = (&sh.oldest_report, &sh.newest_report) {
        let _ = write!(out, " · reports from {} to {}", esc(a), esc(b));
    }
    out.push_str("</p>\n");
    let mut text = format!(
        "{} node{}, {} GPU{}: {}",
        sh.nodes,
        plural(sh.nodes),
        sh.gpus,
        plural(sh.gpus),
        f.counts_text()
    );
    if unusable > 0 {
        let _ = write!(text, ", {unusable} report{} not used", plural(unusable));
    }
    if sh.nodes == 0 {
        text = "No usable node report: nothing was checked".into();
    }
    let _ = writeln!(
        out,
        "<p class=\"verdict {class}\" id=\"verdict\"><span class=\"mark\">{mark}</span> {}</p>",
        esc(&text)
    );
}

fn shape(out: &mut String, f: &Fleet) {
    let sh = &f.shape;
    let counts = |c: &[crate::fleet::aggregate::Count]| -> String {
        if c.is_empty() {
            return "<span class=\"dim\">none</span>".into();
        }
        c.iter()
            .map(|c| {
                format!(
                    "{} <span class=\"dim\">({} node{})</span>",
                    esc(&c.value),
                    c.nodes,
                    plural(c.nodes)
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let models = sh
        .gpus_by_model
        .iter()
        .map(|m| {
            format!(
                "{} × {} <span class=\"dim\">({} node{})</span>",
                m.gpus,
                esc(&m.model),
                m.nodes,
                plural(m.nodes)
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    out.push_str("<h2 id=\"shape\">Shape</h2>\n<table class=\"kv\">\n");
    for (label, value) in [
        ("GPUs", models),
        ("GPUs per node", counts(&sh.gpu_counts)),
        ("drivers", counts(&sh.drivers)),
        ("CUDA (driver)", counts(&sh.cuda)),
        ("toolkits", counts(&sh.toolkits)),
        ("torch", counts(&sh.torch)),
    ] {
        let _ = writeln!(out, "<tr><th>{label}</th><td>{value}</td></tr>");
    }
    out.push_str("</table>\n");
}

fn heat_map(out: &mut String, f: &Fleet, columns: &[&str], rows: &[Row], details: &[Detail]) {
    if f.nodes.is_empty() {
        return;
    }
    out.push_str("<h2 id=\"nodes\">Nodes × findings</h2>\n");
    let _ = writeln!(
        out,
        "<p class=\"dim\">{} node{} in {} row{}: nodes with the same GPU model, the same findings \
         and the same differences from their peers share a row. Each cell links to the finding; \
         <span class=\"m e\">✗</span> error, <span class=\"m w\">!</span> warning, \
         <span class=\"m i\">i</span> info, empty: none.</p>",
        f.nodes.len(),
        plural(f.nodes.len()),
        rows.len(),
        plural(rows.len())
    );
    out.push_str(
        "<div class=\"controls\" hidden><label>Filter <input id=\"filter\" type=\"search\" \
         placeholder=\"node, model, code…\"></label> <label><input id=\"only-problems\" \
         type=\"checkbox\"> only rows with findings</label></div>\n",
    );
    let title_of: HashMap<&str, &str> = f
        .findings
        .iter()
        .rev()
        .map(|g| (g.code.as_str(), g.title.as_str()))
        .collect();
    let mut head =
        String::from("<thead><tr><th>nodes</th><th>count</th><th>differs from peers</th>");
    for c in columns {
        // The code's own title (what the column means); the fleet's commonest title of it
        // when the registry does not know the code (a report from a later gpudoctor).
        let title = crate::codes::lookup(c)
            .map(|i| i.title)
            .or_else(|| title_of.get(c).copied())
            .unwrap_or("");
        let _ = write!(
            head,
            "<th class=\"code\" title=\"{}\">{} <span class=\"t\">{}</span></th>",
            esc(title),
            esc(c),
            esc(&short_title(title))
        );
    }
    head.push_str("</tr></thead>\n");

    // Rows by model (the fleet's largest model first), worst rows first within a model; a
    // row that differs from its peers ranks with the warnings.
    let rank = |r: &Row| {
        let differs = (!r.outliers.is_empty()).then_some(crate::findings::Severity::Warning);
        r.worst.max(differs)
    };
    let mut order: Vec<&Row> = rows.iter().collect();
    let model_nodes: BTreeMap<&str, usize> = rows.iter().fold(BTreeMap::new(), |mut m, r| {
        *m.entry(r.model).or_default() += r.nodes.len();
        m
    });
    order.sort_by(|a, b| {
        model_nodes[b.model]
            .cmp(&model_nodes[a.model])
            .then_with(|| natural_cmp(a.model, b.model))
            .then_with(|| rank(b).cmp(&rank(a)))
            .then_with(|| b.outliers.len().cmp(&a.outliers.len()))
            .then_with(|| natural_cmp(&a.nodes[0].name, &b.nodes[0].name))
    });
    // The first page of rows is open; each further page is a closed <details>, which the
    // browser does not lay out until opened, so a fleet of 10,000 distinct rows still opens
    // quickly. Without the script every page is there to open.
    for (p, page) in order.chunks(PAGE_ROWS).enumerate() {
        if p > 0 {
            let first = p * PAGE_ROWS + 1;
            let _ = writeln!(
                out,
                "<details class=\"page\"><summary>rows {first}–{} of {}</summary>",
                first - 1 + page.len(),
                order.len()
            );
        }
        let _ = write!(out, "<table class=\"heat filterable sortable\">\n{head}");
        let mut current: Option<&str> = None;
        for r in page {
            if current != Some(r.model) {
                if current.is_some() {
                    out.push_str("</tbody>\n");
                }
                current = Some(r.model);
                let _ = writeln!(
                    out,
                    "<tbody><tr class=\"group\"><th colspan=\"{}\">{} <span class=\"dim\">({} node{})</span></th></tr>",
                    columns.len() + 3,
                    esc(r.model),
                    model_nodes[r.model],
                    plural(model_nodes[r.model])
                );
            }
            row(out, r, details);
        }
        out.push_str("</tbody>\n</table>\n");
        if p > 0 {
            out.push_str("</details>\n");
        }
    }
}

/// A heat-map column's title, cut at a word to fit a narrow header (whole on hover).
fn short_title(title: &str) -> String {
    const MOST: usize = 28;
    if title.chars().count() <= MOST {
        return title.to_string();
    }
    let mut out = String::new();
    for word in title.split(' ') {
        if out.chars().count() + word.chars().count() + 1 > MOST - 1 {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out.push('…');
    out
}

fn row(out: &mut String, r: &Row, details: &[Detail]) {
    let worst = match r.worst {
        Some(s) => s.as_str(),
        None => "ok",
    };
    let class = if r.outliers.is_empty() {
        "row"
    } else {
        "row outlier"
    };
    let _ = write!(
        out,
        "<tr class=\"{class}\" data-worst=\"{worst}\"><td class=\"node\" data-sort=\"{}\">",
        esc(&r.nodes[0].name)
    );
    // A few names are shown as they are; more open from the first ones.
    if r.nodes.len() <= NAMES_SHOWN {
        let names: Vec<String> = r.nodes.iter().map(|n| esc(&n.name)).collect();
        out.push_str(&names.join(", "));
    } else {
        let first: Vec<String> = r
            .nodes
            .iter()
            .take(NAMES_SHOWN - 1)
            .map(|n| esc(&n.name))
            .collect();
        let _ = write!(
            out,
            "<details><summary>{} and {} more</summary><span class=\"mono\">",
            first.join(", "),
            r.nodes.len() - first.len()
        );
        for (i, n) in r.nodes.iter().take(NAMES_IN_ROW).enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push_str(&esc(&n.name));
        }
        if r.nodes.len() > NAMES_IN_ROW {
            let _ = write!(out, ", … and {} more", r.nodes.len() - NAMES_IN_ROW);
        }
        out.push_str("</span></details>");
    }
    let _ = write!(
        out,
        "</td><td data-sort=\"{0}\">{0}</td><td>",
        r.nodes.len()
    );
    for (i, o) in r.outliers.iter().enumerate() {
        if i > 0 {
            out.push_str("<br>");
        }
        let _ = write!(
            out,
            "<span class=\"m w\">≠</span> <span class=\"differs\">{} {}</span> <span class=\"dim\">(peers: {})</span>",
            esc(&o.what),
            esc(&o.value),
            esc(&o.peers)
        );
    }
    out.push_str("</td>");
    for cell in &r.cells {
        match cell {
            None => out.push_str("<td class=\"c\"></td>"),
            Some(idx) => {
                let d = &details[*idx];
                let (m, class) = mark(d.severity);
                let _ = write!(
                    out,
                    "<td class=\"c {class}\"><a href=\"#f{idx}\" title=\"{} {}: {}\">{m}</a></td>",
                    esc(d.code),
                    d.severity.as_str(),
                    esc(d.title)
                );
            }
        }
    }
    out.push_str("</tr>\n");
}

fn outliers(out: &mut String, f: &Fleet) {
    if f.outliers.is_empty() {
        return;
    }
    out.push_str("<h2 id=\"outliers\">Outliers <span class=\"dim\">(differ from the nodes with the same GPU model)</span></h2>\n");
    out.push_str("<table class=\"sortable\"><thead><tr><th>node</th><th>what</th><th>value</th><th>peers</th><th>group</th></tr></thead><tbody>\n");
    for o in &f.outliers {
        let _ = writeln!(
            out,
            "<tr class=\"row\"><td><span class=\"m w\">!</span> {}</td><td>{}</td><td>{}</td><td>{} <span class=\"dim\">({} other node{})</span></td><td>{}</td></tr>",
            esc(&o.node),
            esc(&o.what),
            esc(&o.value),
            esc(&o.peers),
            o.peer_nodes,
            plural(o.peer_nodes),
            esc(&o.group)
        );
    }
    out.push_str("</tbody></table>\n");
}

fn by_code(out: &mut String, f: &Fleet) {
    if f.findings.is_empty() {
        return;
    }
    out.push_str(
        "<h2 id=\"codes\">Findings by code <span class=\"dim\">(worst first)</span></h2>\n",
    );
    out.push_str("<table class=\"sortable\"><thead><tr><th>code</th><th>nodes</th><th>title</th><th>which</th></tr></thead><tbody>\n");
    for g in &f.findings {
        let (m, class) = mark(g.severity);
        let _ = write!(
            out,
            "<tr class=\"row\"><td class=\"{class}\" data-sort=\"{}\"><span class=\"mark\">{m}</span> {} <span class=\"dim\">{}</span></td><td data-sort=\"{}\">{} of {}</td><td>{}",
            esc(&g.code),
            esc(&g.code),
            g.severity.as_str(),
            g.nodes,
            g.nodes,
            f.shape.nodes,
            esc(&g.title)
        );
        if let Some(why) = super::fleet::caused_line(g) {
            let _ = write!(out, " <span class=\"dim\">({})</span>", esc(&why));
        }
        out.push_str("</td><td>");
        let first = Fleet::names_line(&g.node_names);
        if g.node_names.len() <= 12 {
            out.push_str(&esc(&first));
        } else {
            let _ = write!(
                out,
                "<details><summary>{}</summary><span class=\"mono\">{}</span></details>",
                esc(&first),
                esc(&g.node_names.join(", "))
            );
        }
        out.push_str("</td></tr>\n");
    }
    out.push_str("</tbody></table>\n");
}

fn finding_details(out: &mut String, details: &[Detail]) {
    if details.is_empty() {
        return;
    }
    out.push_str("<h2 id=\"details\">Findings in detail</h2>\n");
    for (i, d) in details.iter().enumerate() {
        // Like the heat map, in pages: the later ones closed (a browser opens the page a
        // followed link leads into).
        if i % PAGE_ROWS == 0 && i > 0 {
            if i > PAGE_ROWS {
                out.push_str("</details>\n");
            }
            let _ = writeln!(
                out,
                "<details class=\"page\"><summary>findings {}–{} of {}</summary>",
                i + 1,
                (i + PAGE_ROWS).min(details.len()),
                details.len()
            );
        }
        let (m, class) = mark(d.severity);
        let _ = write!(
            out,
            "<div class=\"finding\" id=\"f{i}\"><h3><span class=\"m {class}\">{m}</span> {}[{}]: {} <span class=\"dim\">({} node{})</span></h3>",
            d.severity.as_str(),
            esc(d.code),
            esc(d.title),
            d.nodes,
            plural(d.nodes)
        );
        super::html::evidence_and_fixes(out, d.evidence, d.fix);
        out.push_str("</div>\n");
    }
    if details.len() > PAGE_ROWS {
        out.push_str("</details>\n");
    }
}

fn problems(out: &mut String, f: &Fleet) {
    if f.problems.is_empty() && f.identity.is_empty() {
        return;
    }
    if !f.identity.is_empty() {
        out.push_str("<h2 id=\"identities\">Node identities</h2>\n<table><thead><tr><th>kind</th><th>nodes</th><th>detail</th></tr></thead><tbody>\n");
        for n in &f.identity {
            let _ = writeln!(
                out,
                "<tr><td><span class=\"m w\">!</span> {}</td><td>{}</td><td>{}</td></tr>",
                esc(&n.kind),
                esc(&n.nodes.join(", ")),
                esc(&n.detail)
            );
        }
        out.push_str("</tbody></table>\n");
    }
    if !f.problems.is_empty() {
        out.push_str("<h2 id=\"unused\">Reports not used</h2>\n<table><thead><tr><th>report</th><th>problem</th><th>detail</th></tr></thead><tbody>\n");
        for p in &f.problems {
            let (m, class) = if p.kind == crate::fleet::aggregate::DUPLICATE {
                ("i", "i")
            } else {
                ("✗", "e")
            };
            let _ = writeln!(
                out,
                "<tr><td class=\"mono\">{}</td><td><span class=\"m {class}\">{m}</span> {}</td><td>{}</td></tr>",
                esc(&p.source),
                esc(&p.kind),
                esc(&p.detail)
            );
        }
        out.push_str("</tbody></table>\n");
        if f.problems_not_listed > 0 {
            let kinds = f
                .problems_by_kind
                .iter()
                .map(|(k, n)| format!("{k}: {n}"))
                .collect::<Vec<_>>()
                .join(", ");
            let _ = writeln!(
                out,
                "<p class=\"dim\">… and {} more not listed (all {} by kind: {})</p>",
                f.problems_not_listed,
                f.problems.len() + f.problems_not_listed,
                esc(&kinds)
            );
        }
    }
}
