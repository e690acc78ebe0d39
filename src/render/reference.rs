//! The reference pages rendered from the code's registries: `docs/codes.md` from
//! src/codes.rs and src/explain/, `docs/environment.md` from src/envvars.rs.

use crate::render::markdown;
use crate::{codes, envvars};

/// `docs/codes.md`: every code with its title, its severities and its explanation, in
/// registry order. tests/it/docs.rs fails when the file differs (`UPDATE_DOCS=1` rewrites it).
pub fn codes_markdown() -> String {
    let mut s = String::from(
        "# Finding codes\n\n\
         <!-- Generated from src/codes.rs and src/explain/ by `UPDATE_DOCS=1 cargo test --test it docs::`. Do not edit by hand. -->\n\n\
         Every finding gpudoctor reports carries one of these codes. `gpudoctor explain CODE` prints the\n\
         explanation below (`GD012`, `gd012` and `12` all work) and `gpudoctor explain --list` lists\n\
         every code with its title. The severity column lists every severity a finding with that code\n\
         can have; which one applies depends on what the finding found (the explanation says when).\n\
         A site's configuration can report a code at another severity, or not at all\n\
         ([configuration.md](configuration.md)), and `--fail-on` turns severities into exit codes\n\
         ([ci.md](ci.md#exit-codes)).\n\n\
         | Code | Severity | Title |\n\
         |---|---|---|\n",
    );
    for c in codes::CODES {
        s.push_str(&format!(
            "| [{}](#{}) | {} | {} |\n",
            c.code,
            c.code.to_ascii_lowercase(),
            codes::severity_text(c),
            markdown::cell(c.title)
        ));
    }
    for c in codes::CODES {
        // The explanation's own first line is `# GDxxx: title`; the heading here is the
        // code alone, so links to `#gdxxx` stay short and stable.
        let body = c.body();
        s.push_str(&format!(
            "\n## {}\n\n**{}** · severity: {}\n\n{}\n",
            c.code,
            c.title,
            codes::severity_text(c),
            body
        ));
    }
    s
}

/// `docs/environment.md`: every registered variable by category, rendered from this registry
/// (tests/it/docs.rs keeps the file in step; `UPDATE_DOCS=1` rewrites it).
pub fn environment_markdown() -> String {
    let markers: Vec<String> = envvars::SECRET_MARKERS
        .iter()
        .map(|m| format!("`{m}`"))
        .collect();
    let mut s = format!(
        "# Environment variables\n\n\
         <!-- Generated from src/envvars.rs by `UPDATE_DOCS=1 cargo test --test it docs::`. Do not edit by hand. -->\n\n\
         gpudoctor reads only the environment variables registered in `src/envvars.rs`, listed here by\n\
         category, plus every variable starting with a registered prefix. `gpudoctor check -v` shows\n\
         every one of them that is set, and the JSON report carries them. Values of variables whose\n\
         names look secret are replaced by `<redacted>` in every output: names containing\n\
         {},\n\
         or a `KEY` or `APIKEY` part. The debugging switches with a \"reported\" column are reported\n\
         when left set ([GD013](codes.md#gd013)); \"a true value\" is anything but empty, `0`,\n\
         `false`, `off` or `no`. The variables the tests and CI scripts use are in\n\
         [testing.md](testing.md).\n",
        markers.join(", ")
    );
    for category in envvars::Category::ALL {
        let (title, text) = category.describe();
        let vars: Vec<&envvars::EnvVar> = envvars::ALL
            .iter()
            .filter(|v| v.category == category)
            .collect();
        let reported = vars.iter().any(|v| v.left_set.is_some());
        s.push_str(&format!("\n## {title}\n\n{text}\n\n"));
        s.push_str(if reported {
            "| variable | meaning | reported |\n|---|---|---|\n"
        } else {
            "| variable | meaning |\n|---|---|\n"
        });
        for v in vars {
            let purpose = v.purpose.replace('|', "\\|");
            let when = match v.left_set {
                Some(envvars::LeftSet {
                    truthy_only: true, ..
                }) => " GD013 when set to a true value |",
                Some(envvars::LeftSet {
                    truthy_only: false, ..
                }) => " GD013 when set |",
                None if reported => " |",
                None => "",
            };
            s.push_str(&format!("| `{}` | {purpose} |{when}\n", v.name));
        }
        for (prefix, _) in envvars::PREFIXES.iter().filter(|(_, c)| *c == category) {
            let blank = if reported { " |" } else { "" };
            s.push_str(&format!(
                "| `{prefix}*` | every variable with this prefix |{blank}\n"
            ));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use crate::envvars::{Category, ALL};

    #[test]
    fn every_variable_has_a_row_in_its_categorys_section() {
        for v in ALL {
            assert!(Category::ALL.contains(&v.category), "{}", v.name);
        }
        let md = super::environment_markdown();
        assert!(ALL
            .iter()
            .all(|v| md.contains(&format!("| `{}` |", v.name))));
    }
}
