//! What every HTML page shares: escaping, the page shell with its inline style and script,
//! and the severity marks. Pages are self-contained (no network, fonts or external files),
//! readable without JavaScript (the script only sorts and filters) and printable.

use std::fmt::Write as _;

use sha2::{Digest, Sha256};

use crate::findings::{Evidence, Finding, Fix, Severity};
use crate::verdict::Verdict;

/// Terminal text whose `quoted` spans are commands: escaped, each span as `<code>`.
pub fn esc_with_code(s: &str) -> String {
    let parts: Vec<&str> = s.split('`').collect();
    // An unpaired backtick is text.
    if parts.len() % 2 == 0 {
        return esc(s);
    }
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if i % 2 == 1 {
                format!("<code>{}</code>", esc(p))
            } else {
                esc(p)
            }
        })
        .collect()
}

/// Text for HTML element content and quoted attribute values. Everything a report holds
/// (node names, paths, environment values, titles) comes from the inspected machines and is
/// untrusted: all five special characters are escaped, and control characters are shown
/// escaped as in the terminal.
pub fn esc(s: &str) -> String {
    let s = super::printable(s);
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The mark and CSS class of a severity; the mark is text, so colour is never the only signal.
pub fn mark(sev: Severity) -> (&'static str, &'static str) {
    match sev {
        Severity::Error => ("✗", "e"),
        Severity::Warning => ("!", "w"),
        Severity::Info => ("i", "i"),
    }
}

/// The mark and CSS class of a line's verdict (`crate::verdict`): ✓ passed, ! warning,
/// ✗ error, i info, · not judged.
pub fn verdict_mark(v: Verdict) -> (&'static str, &'static str) {
    let class = match v {
        Verdict::Error => "e",
        Verdict::Warning => "w",
        Verdict::Info => "i",
        Verdict::Passed => "ok",
        Verdict::NotJudged => "nj",
    };
    (super::form::symbol(v), class)
}

/// A mark as a cell of its own: `<td class="m-cell e">✗</td>`.
pub fn mark_cell(v: Verdict) -> String {
    let (m, class) = verdict_mark(v);
    format!("<td class=\"mc {class}\">{m}</td>")
}

/// The findings, each with its why, evidence and fixes (the terminal's finding blocks).
pub fn findings(findings: &[Finding]) -> String {
    let mut out = String::new();
    if findings.is_empty() {
        return out;
    }
    out.push_str("<h2 id=\"findings\">Findings</h2>\n");
    for (i, f) in findings.iter().enumerate() {
        let (m, class) = mark(f.severity);
        let _ = write!(
            out,
            "<div class=\"finding\" id=\"finding-{i}\"><h3><span class=\"m {class}\">{m}</span> {}[{}]: {}</h3>",
            f.severity.as_str(),
            esc(&f.code),
            esc(&f.title)
        );
        // A consequence links to its cause and has no fixes of its own.
        if let Some(cause) = &f.caused_by {
            let at = findings
                .iter()
                .position(|r| r.code == *cause && r.is_root());
            let cause_ref = match at {
                Some(n) => format!("<a href=\"#finding-{n}\">{}</a>", esc(cause)),
                None => esc(cause),
            };
            let _ = write!(
                out,
                "<p class=\"cause\">Caused by {cause_ref}: {}</p>",
                esc(f.cause_note.as_deref().unwrap_or_default())
            );
        }
        if !f.detail.is_empty() {
            let _ = write!(out, "<p>{}</p>", esc(&f.detail));
        }
        let fixes: &[Fix] = if f.is_root() { &f.fix } else { &[] };
        evidence_and_fixes(&mut out, &f.evidence, fixes);
        out.push_str("</div>\n");
    }
    out
}

/// A finding's evidence (value and where it was read) and its fixes (text, then command).
pub fn evidence_and_fixes(out: &mut String, evidence: &[Evidence], fixes: &[Fix]) {
    if !evidence.is_empty() {
        out.push_str("<ul class=\"evidence\">");
        for e in evidence {
            let _ = write!(
                out,
                "<li><code>{}</code> <span class=\"dim\">[{}]</span></li>",
                esc(&e.value),
                esc(&e.source)
            );
        }
        out.push_str("</ul>");
    }
    if !fixes.is_empty() {
        out.push_str("<div class=\"fix\">");
        for fx in fixes {
            let _ = write!(out, "<div>fix: {}</div>", esc(&fx.text));
            if let Some(cmd) = &fx.command {
                let _ = write!(out, "<code>$ {}</code>", esc(cmd));
            }
        }
        out.push_str("</div>");
    }
}

const STYLE: &str = r#"
:root{--e:#c62828;--e-bg:#fde8e8;--w:#8a5a00;--w-bg:#fff3cd;--i:#1f5f99;--i-bg:#e3f0fb;--ok:#2e7d32;--ok-bg:#e8f5e9;--line:#d0d7de;--dim:#57606a}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:#1f2328;background:#fff;margin:0;padding:16px 24px}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:24px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
.verdict{font-size:16px;font-weight:600;padding:8px 12px;border-radius:6px;margin:8px 0 12px;display:inline-block}
.verdict.e{background:var(--e-bg);color:var(--e)}.verdict.w{background:var(--w-bg);color:var(--w)}.verdict.ok{background:var(--ok-bg);color:var(--ok)}.verdict.i{background:var(--i-bg);color:var(--i)}
.dim{color:var(--dim)}code,.mono{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:12.5px}
table{border-collapse:collapse;margin:4px 0 8px}th,td{border:1px solid var(--line);padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f6f8fa;font-weight:600}
table.kv th{width:12em}
.heat{font-size:12.5px}.heat th.code{writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap;padding:6px 2px}.heat th.code .t{font-weight:400;color:var(--dim)}
.heat td.c{text-align:center;padding:0;width:26px;min-width:26px}
.heat td.c a{display:block;padding:3px 0;text-decoration:none;font-weight:700;color:inherit}
td.e,.m.e{background:var(--e-bg);color:var(--e)}td.w,.m.w{background:var(--w-bg);color:var(--w)}td.i,.m.i{background:var(--i-bg);color:var(--i)}
td.ok{color:var(--ok)}
.m{display:inline-block;min-width:1.4em;text-align:center;border-radius:3px;font-weight:700}
tr.group th{background:#eef1f4;text-align:left}
tr.outlier td.node{box-shadow:inset 4px 0 0 var(--w)}
.differs{color:var(--w);font-weight:600}
details>summary{cursor:pointer}
.finding{border:1px solid var(--line);border-radius:6px;padding:6px 10px;margin:6px 0}
.finding:target{outline:3px solid #0969da}
.finding h3{font-size:14px;margin:0 0 4px}
.fix code{display:block;white-space:pre-wrap;background:#f6f8fa;padding:4px 6px;margin:2px 0 4px;border-radius:4px}
.controls{margin:8px 0}.controls input{font:inherit;padding:2px 6px}
td.mc{text-align:center;font-weight:700;width:1.8em}td.ok,.m.ok{color:var(--ok)}td.nj{color:var(--dim)}
.bar{position:relative;background:#eef1f4;border-radius:3px;height:16px;width:320px;display:inline-block;vertical-align:middle}
.bar>span{position:absolute;left:0;top:0;bottom:0;background:#4a7fb5;border-radius:3px}
.topo td,.topo th{text-align:center;font-size:12.5px}
@media print{.controls{display:none}details{display:block}details>*{display:block}body{padding:0}a{color:inherit;text-decoration:none}}
"#;

/// The small script: sort a table by a column (click its header) and filter rows by text or
/// by whether they have a finding. Without it the page shows everything, unsorted.
const SCRIPT: &str = r#"
(function(){
document.documentElement.setAttribute('data-js','ready');
var c=document.querySelector('.controls');if(c){c.hidden=false;}
var q=document.getElementById('filter'),bad=document.getElementById('only-problems');
function apply(){var t=(q&&q.value||'').toLowerCase(),b=bad&&bad.checked;
document.querySelectorAll('table.filterable tbody tr.row').forEach(function(r){
var show=(!t||r.textContent.toLowerCase().indexOf(t)>=0)&&(!b||r.getAttribute('data-worst')!=='ok');
r.hidden=!show;});}
if(q){q.addEventListener('input',apply);}if(bad){bad.addEventListener('change',apply);}
document.querySelectorAll('table.sortable thead th').forEach(function(th,i){
th.style.cursor='pointer';th.title=(th.title?th.title+' — ':'')+'click to sort';
th.addEventListener('click',function(){var tbl=th.closest('table'),asc=th.getAttribute('data-asc')!=='1';
th.setAttribute('data-asc',asc?'1':'0');
tbl.querySelectorAll('tbody').forEach(function(tb){
var rows=Array.prototype.slice.call(tb.querySelectorAll('tr.row'));
rows.sort(function(a,b){var x=a.children[i],y=b.children[i];
var kx=x?(x.getAttribute('data-sort')||x.textContent):'',ky=y?(y.getAttribute('data-sort')||y.textContent):'';
var nx=parseFloat(kx),ny=parseFloat(ky),r=(!isNaN(nx)&&!isNaN(ny))?nx-ny:kx.localeCompare(ky,undefined,{numeric:true});
return asc?r:-r;});
rows.forEach(function(r){tb.appendChild(r);});});});});
})();
"#;

/// A whole page: `title` (plain text, escaped here) and `body` (HTML built with `esc`).
pub fn page(title: &str, body: &str) -> String {
    let mut out = String::with_capacity(body.len() + STYLE.len() + SCRIPT.len() + 512);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    // Nothing on the page may load from elsewhere, and the only script that may run is the
    // page's own (by its hash): markup that slipped into a report could not run a handler.
    let _ = writeln!(
        out,
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; script-src 'sha256-{}'\">",
        base64(&Sha256::digest(SCRIPT.as_bytes()))
    );
    let _ = write!(
        out,
        "<title>{}</title>\n<style>{STYLE}</style>\n",
        esc(title)
    );
    out.push_str("</head>\n<body>\n");
    out.push_str(body);
    let _ = write!(out, "\n<script>{SCRIPT}</script>\n</body>\n</html>\n");
    out
}

/// Standard base64 with padding (RFC 4648), for the script's hash in the page's policy.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_special_character_is_escaped() {
        assert_eq!(
            esc("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
        // Control characters are shown, not passed through.
        assert_eq!(esc("a\u{1b}[31mb"), "a\\u{1b}[31mb");
    }

    #[test]
    fn a_quoted_command_is_code_and_still_escaped() {
        assert_eq!(
            esc_with_code("run `gpudoctor explain <GD006>` for details"),
            "run <code>gpudoctor explain &lt;GD006&gt;</code> for details"
        );
        assert_eq!(esc_with_code("a ` b"), "a ` b");
    }

    #[test]
    fn base64_is_rfc_4648() {
        for (input, expected) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(input.as_bytes()), expected);
        }
    }

    #[test]
    fn the_page_loads_nothing_from_elsewhere() {
        let p = page("t <x>", "<p>body</p>");
        assert!(p.starts_with("<!DOCTYPE html>"));
        assert!(p.contains("<title>t &lt;x&gt;</title>"));
        assert!(p.contains("default-src 'none'"));
        for external in [
            "http://",
            "https://",
            "src=\"",
            "href=\"http",
            "@import",
            "url(",
        ] {
            assert!(!p.contains(external), "{external}");
        }
    }
}
