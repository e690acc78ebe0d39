//! `gpudoctor man`: the manual page, generated from the clap definitions (the copy in
//! man/gpudoctor.1 is checked against it).

use super::settings::Settings;
use super::{emit_report, CliError};

pub(super) fn man(g: &Settings) -> Result<u8, CliError> {
    emit_report(g, page().as_bytes())
}

/// The whole page: name, synopsis, description, the options of a bare `gpudoctor` (which
/// are check's), the subcommands, then each subcommand's own options, the examples.
pub fn page() -> String {
    // The page lists check's options at the top, as a bare `gpudoctor` takes them.
    let cmd = super::completions::visible_command()
        .mut_args(|a| a.hide_short_help(false).hide_long_help(false));
    let man = clap_mangen::Man::new(cmd.clone());
    let mut out = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = man.render_title(&mut out);
    let _ = man.render_name_section(&mut out);
    let _ = man.render_synopsis_section(&mut out);
    let _ = man.render_description_section(&mut out);
    let _ = man.render_options_section(&mut out);
    let _ = man.render_subcommands_section(&mut out);
    for sub in cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "check")
    {
        let has_args = sub
            .get_arguments()
            .any(|a| !a.is_hide_set() && !a.is_global_set() && a.get_id() != "help");
        if !has_args {
            continue;
        }
        let name = sub.get_name().to_string();
        // A subcommand's arguments without the global switches, which OPTIONS lists.
        let mut own = clap::Command::new(format!("gpudoctor-{name}"));
        for a in sub
            .get_arguments()
            .filter(|a| !a.is_global_set() && a.get_id() != "help")
        {
            own = own.arg(a.clone());
        }
        let mut part = Vec::new();
        let _ = clap_mangen::Man::new(own).render_options_section(&mut part);
        let part = String::from_utf8_lossy(&part).replacen(
            ".SH OPTIONS",
            &format!(".SH \"OPTIONS OF gpudoctor {name}\""),
            1,
        );
        out.extend_from_slice(part.as_bytes());
    }
    let mut extra = Vec::new();
    let _ = man.render_extra_section(&mut extra);
    // The examples as written (no filling: each command and its description keep their
    // lines), under the heading man pages use for them.
    let mut extra =
        String::from_utf8_lossy(&extra).replacen(".SH EXTRA\n", ".SH EXAMPLES\n.nf\n", 1);
    // The paragraphs after the examples are prose again.
    match extra.find("\nConfiguration:") {
        Some(i) => extra.insert_str(i + 1, ".fi\n"),
        None => extra.push_str(".fi\n"),
    }
    out.extend_from_slice(extra.as_bytes());
    let mut s = String::from_utf8_lossy(&out).into_owned();
    // One page: subcommands are named as typed, not as separate pages; and no hyphenation
    // inside paths and variable names.
    for sub in cmd.get_subcommands() {
        let name = sub.get_name();
        s = s.replace(
            &format!("gpudoctor\\-{name}(1)"),
            &format!("gpudoctor {name}"),
        );
    }
    if let Some(end) = s
        .find(".TH ")
        .and_then(|i| s[i..].find('\n').map(|j| i + j + 1))
    {
        s.insert_str(end, ".nh\n.ad l\n");
    }
    s.push_str(&environment_and_files());
    let mut version = Vec::new();
    let _ = man.render_version_section(&mut version);
    s.push_str(&String::from_utf8_lossy(&version));
    s
}

/// ENVIRONMENT (the variables gpudoctor itself reads) and FILES (its configuration).
fn environment_and_files() -> String {
    let mut s = String::from(".SH ENVIRONMENT\n");
    for v in crate::envvars::ALL
        .iter()
        .filter(|v| v.category == crate::envvars::Category::Tool)
        .filter(|v| !v.name.starts_with("GPUDOCTOR_FAULT_"))
    {
        s.push_str(&format!(
            ".TP\n\\fB{}\\fR\n{}\n",
            roff(v.name),
            roff(v.purpose)
        ));
    }
    s.push_str(".SH FILES\n");
    for (path, what) in [
        (super::config::SYSTEM_CONFIG, "system-wide configuration"),
        (
            "$XDG_CONFIG_HOME/gpudoctor/config.toml",
            "the user's configuration (default ~/.config/gpudoctor/config.toml); see gpudoctor config",
        ),
    ] {
        s.push_str(&format!(".TP\n\\fI{}\\fR\n{}\n", roff(path), roff(what)));
    }
    s
}

/// Text safe in a roff line: backslashes escaped, no line starting a request.
fn roff(text: &str) -> String {
    let t = text.replace('\\', "\\e").replace('-', "\\-");
    if t.starts_with('.') || t.starts_with('\'') {
        format!("\\&{t}")
    } else {
        t
    }
}
