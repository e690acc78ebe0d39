//! The parts of Python packaging gpudoctor needs to read wheels' metadata the way pip does:
//! PEP 440 versions and specifiers, and PEP 508 environment markers — evaluated for Linux on
//! this machine and the environment's Python, without running Python.

use std::cmp::Ordering;
use std::collections::HashSet;
use std::str::FromStr;

/// A PEP 440 version, as astral's `pep440_rs` (the implementation uv uses) parses and orders
/// it: epochs, pre/post/dev releases and local labels, with `Ord` and `Eq` agreeing.
pub use pep440_rs::Version as PyVersion;

/// Text that is not a PEP 440 version or specifier list. Nothing unparsable is taken to
/// satisfy a requirement: callers report it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    #[error("{text:?} is not a PEP 440 version ({reason})")]
    Version { text: String, reason: String },
    #[error("{text:?} is not a PEP 440 specifier list ({reason})")]
    Specifier { text: String, reason: String },
}

/// Parses a version as pip does (surrounding whitespace and a leading `v` allowed).
pub fn parse_version(text: &str) -> Result<PyVersion, VersionError> {
    PyVersion::from_str(text.trim()).map_err(|e| VersionError::Version {
        text: text.to_string(),
        reason: e.to_string(),
    })
}

/// The total order gpudoctor sorts versions by: PEP 440's (local labels included, so
/// `2.4.1+cu124` and `2.4.1+cu118` differ and are ordered); text that is no PEP 440 version
/// sorts before every version, and among itself by its bytes.
pub fn cmp_versions(a: &str, b: &str) -> Ordering {
    match (parse_version(a), parse_version(b)) {
        (Ok(x), Ok(y)) => x.cmp(&y),
        (Err(_), Ok(_)) => Ordering::Less,
        (Ok(_), Err(_)) => Ordering::Greater,
        (Err(_), Err(_)) => a.cmp(b),
    }
}

/// Whether `version` satisfies a PEP 440 specifier list (comma-separated clauses; empty holds
/// for every version), as pip judges an installed distribution: pre-releases are not
/// excluded, and a local label is ignored unless the clause names one. `===` compares the
/// text, case-insensitively, as packaging does. An unparsable version or specifier is an
/// error, never a yes.
pub fn satisfies(version: &str, spec: &str) -> Result<bool, VersionError> {
    let mut arbitrary = Vec::new();
    let mut rest = Vec::new();
    for clause in spec.split(',').map(str::trim).filter(|c| !c.is_empty()) {
        match clause.strip_prefix("===") {
            Some(text) => arbitrary.push(text.trim()),
            None => rest.push(clause),
        }
    }
    let identity_ok = arbitrary
        .iter()
        .all(|want| want.eq_ignore_ascii_case(version.trim()));
    if rest.is_empty() {
        return Ok(identity_ok);
    }
    let specifiers = pep440_rs::VersionSpecifiers::from_str(&rest.join(",")).map_err(|e| {
        VersionError::Specifier {
            text: spec.to_string(),
            reason: e.to_string().lines().next().unwrap_or_default().to_string(),
        }
    })?;
    let v = parse_version(version)?;
    Ok(identity_ok && specifiers.iter().all(|clause| clause_holds(clause, &v)))
}

/// One clause, as packaging's `Specifier.contains(prereleases=True)` decides it.
/// pep440_rs 0.7.3 decides all but `<`: it keeps `<V` from matching a pre-release of V's
/// release even when V is itself a pre-release (`3.0.0a7` is in `<3.0.0a8` by packaging's
/// test vectors, not by pep440_rs), so `<` is judged here by packaging's rule.
fn clause_holds(clause: &pep440_rs::VersionSpecifier, v: &PyVersion) -> bool {
    if *clause.operator() != pep440_rs::Operator::LessThan {
        return clause.contains(v);
    }
    let spec = clause.version();
    let v = v.clone().without_local();
    let same_release = v.epoch() == spec.epoch()
        && PyVersion::new(v.release().iter().copied())
            == PyVersion::new(spec.release().iter().copied());
    v < *spec && !(!spec.any_prerelease() && v.any_prerelease() && same_release)
}

/// `satisfies`, where a caller that cannot say why needs a yes or no: anything unparsable is
/// "does not satisfy".
pub fn holds(version: &str, spec: &str) -> bool {
    satisfies(version, spec).unwrap_or(false)
}

/// What a PEP 508 marker is evaluated against.
pub struct MarkerEnv<'a> {
    /// X.Y of the environment's Python, when known; comparisons on it hold when unknown.
    pub python_version: Option<&'a str>,
    /// The extras asked for, normalised (`extra == "cudart"` holds for those): a set, so a
    /// comparison costs the same however many extras a METADATA names.
    extras: HashSet<String>,
    /// `platform_machine` of the environment ("aarch64"): the wheel's own platform tag when
    /// known, else the architecture gpudoctor was built for.
    machine: Option<&'a str>,
}

impl<'a> MarkerEnv<'a> {
    pub fn new(python_version: Option<&'a str>, extras: &[String]) -> MarkerEnv<'a> {
        MarkerEnv {
            python_version,
            extras: extras.iter().map(|e| normalize(e)).collect(),
            machine: None,
        }
    }

    pub fn with_machine(mut self, machine: Option<&'a str>) -> MarkerEnv<'a> {
        self.machine = machine;
        self
    }
}

/// PEP 503 normalisation: lowercase, runs of `-_.` become `-`.
pub fn normalize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut sep = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            sep = true;
            continue;
        }
        if sep && !out.is_empty() {
            out.push('-');
        }
        sep = false;
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// Parentheses a marker may nest. Real markers nest two or three deep; the parser recurses
/// once per level, on a probe thread's stack, so a hostile METADATA must not choose the depth.
pub const MAX_MARKER_DEPTH: usize = 32;

/// A marker that cannot be judged at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MarkerError {
    #[error("marker too deeply nested (more than {MAX_MARKER_DEPTH} levels of parentheses)")]
    TooDeep,
}

/// Evaluates a PEP 508 marker (`and`, `or`, parentheses, comparisons) for Linux on the
/// environment's architecture. Unknown variables and unparsable markers hold (so a requirement
/// is kept rather than silently dropped); a marker nested deeper than MAX_MARKER_DEPTH is
/// an error, which the caller reports.
pub fn marker_holds(marker: &str, env: &MarkerEnv) -> Result<bool, MarkerError> {
    let tokens = tokenize(marker);
    let mut p = Parser {
        tokens: &tokens,
        pos: 0,
        depth: 0,
        too_deep: false,
        env,
    };
    let value = p.or_expr();
    if p.too_deep {
        return Err(MarkerError::TooDeep);
    }
    Ok(match value {
        Some(v) if p.pos == tokens.len() => v,
        _ => true,
    })
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Str(String),
    Op(String),
    LParen,
    RParen,
}

fn tokenize(s: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '(' {
            out.push(Tok::LParen);
            i += 1;
        } else if c == ')' {
            out.push(Tok::RParen);
            i += 1;
        } else if c == '\'' || c == '"' {
            let end = chars[i + 1..]
                .iter()
                .position(|x| *x == c)
                .map(|p| i + 1 + p);
            let Some(end) = end else { break };
            out.push(Tok::Str(chars[i + 1..end].iter().collect()));
            i = end + 1;
        } else if "=!<>~".contains(c) {
            let mut op = String::from(c);
            while i + 1 < chars.len() && "=<>~".contains(chars[i + 1]) && op.len() < 3 {
                i += 1;
                op.push(chars[i]);
            }
            out.push(Tok::Op(op));
            i += 1;
        } else {
            let start = i;
            while i < chars.len()
                && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '.')
            {
                i += 1;
            }
            if start == i {
                i += 1;
                continue;
            }
            out.push(Tok::Ident(chars[start..i].iter().collect()));
        }
    }
    out
}

struct Parser<'a> {
    tokens: &'a [Tok],
    pos: usize,
    /// Open parentheses around `pos`.
    depth: usize,
    /// Set when `depth` would pass MAX_MARKER_DEPTH; parsing stops there.
    too_deep: bool,
    env: &'a MarkerEnv<'a>,
}

impl Parser<'_> {
    fn peek_ident(&self, word: &str) -> bool {
        matches!(self.tokens.get(self.pos), Some(Tok::Ident(w)) if w == word)
    }

    fn or_expr(&mut self) -> Option<bool> {
        let mut v = self.and_expr()?;
        while self.peek_ident("or") {
            self.pos += 1;
            let r = self.and_expr()?;
            v = v || r;
        }
        Some(v)
    }

    fn and_expr(&mut self) -> Option<bool> {
        let mut v = self.atom()?;
        while self.peek_ident("and") {
            self.pos += 1;
            let r = self.atom()?;
            v = v && r;
        }
        Some(v)
    }

    fn atom(&mut self) -> Option<bool> {
        if self.tokens.get(self.pos) == Some(&Tok::LParen) {
            if self.depth == MAX_MARKER_DEPTH {
                self.too_deep = true;
                return None;
            }
            self.pos += 1;
            self.depth += 1;
            let v = self.or_expr()?;
            self.depth -= 1;
            if self.tokens.get(self.pos) != Some(&Tok::RParen) {
                return None;
            }
            self.pos += 1;
            return Some(v);
        }
        let lhs = self.value()?;
        let op = match self.tokens.get(self.pos)? {
            Tok::Op(o) => {
                self.pos += 1;
                o.clone()
            }
            Tok::Ident(w) if w == "in" => {
                self.pos += 1;
                "in".into()
            }
            Tok::Ident(w)
                if w == "not"
                    && matches!(self.tokens.get(self.pos + 1), Some(Tok::Ident(x)) if x == "in") =>
            {
                self.pos += 2;
                "not in".into()
            }
            _ => return None,
        };
        let rhs = self.value()?;
        Some(compare(&lhs, &op, &rhs, &self.env.extras))
    }

    fn value(&mut self) -> Option<Value> {
        let t = self.tokens.get(self.pos)?.clone();
        self.pos += 1;
        Some(match t {
            Tok::Str(s) => Value::Lit(s),
            Tok::Ident(name) => self.variable(&name),
            _ => return None,
        })
    }

    fn variable(&self, name: &str) -> Value {
        let arch = self
            .env
            .machine
            .unwrap_or(if cfg!(target_arch = "aarch64") {
                "aarch64"
            } else {
                "x86_64"
            });
        match name {
            "sys_platform" => Value::Lit("linux".into()),
            "platform_system" => Value::Lit("Linux".into()),
            "os_name" => Value::Lit("posix".into()),
            "platform_machine" => Value::Lit(arch.into()),
            "implementation_name" => Value::Lit("cpython".into()),
            "platform_python_implementation" => Value::Lit("CPython".into()),
            "python_version" | "python_full_version" => match self.env.python_version {
                Some(v) => Value::Version(v.to_string()),
                None => Value::Unknown,
            },
            "extra" => Value::Extras,
            _ => Value::Unknown,
        }
    }
}

#[derive(Debug, Clone)]
enum Value {
    Lit(String),
    Version(String),
    /// The `extra` variable: the set of extras asked for.
    Extras,
    Unknown,
}

fn compare(lhs: &Value, op: &str, rhs: &Value, extras: &HashSet<String>) -> bool {
    match (lhs, rhs) {
        (Value::Unknown, _) | (_, Value::Unknown) => true,
        (Value::Extras, Value::Lit(x)) | (Value::Lit(x), Value::Extras) => {
            let has = extras.contains(&normalize(x));
            match op {
                "==" => has,
                "!=" => !has,
                _ => true,
            }
        }
        (Value::Version(v), Value::Lit(w)) => version_compare(v, op, w),
        (Value::Lit(w), Value::Version(v)) => version_compare_rev(w, op, v),
        (Value::Lit(a), Value::Lit(b)) => match op {
            "==" | "===" => a == b,
            "!=" => a != b,
            "in" => b.contains(a.as_str()),
            "not in" => !b.contains(a.as_str()),
            _ => true,
        },
        _ => true,
    }
}

fn version_compare(v: &str, op: &str, w: &str) -> bool {
    match op {
        "in" => w.contains(v),
        "not in" => !w.contains(v),
        // packaging falls back to comparing the text when the operands are no versions.
        _ => satisfies(v, &format!("{op}{w}")).unwrap_or_else(|_| match op {
            "==" | "===" => v == w,
            "!=" => v != w,
            "<" => v < w,
            "<=" => v <= w,
            ">" => v > w,
            ">=" => v >= w,
            _ => true,
        }),
    }
}

fn version_compare_rev(w: &str, op: &str, v: &str) -> bool {
    let flipped = match op {
        "<" => ">",
        ">" => "<",
        "<=" => ">=",
        ">=" => "<=",
        o => o,
    };
    version_compare(v, flipped, w)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yes(version: &str, spec: &str) -> bool {
        satisfies(version, spec).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn pep440_edge_cases() {
        assert!(yes("9.10.2.21", "==9.10.2.21"));
        assert!(!yes("20.0", "~=2.1"));
        assert!(yes("2.5", "~=2.1"));
        assert!(!yes("12.80.1", "==12.8.*"));
        assert!(yes("12.8.93", "==12.8.*"));
        assert!(!yes("2.10.0.dev20250101", ">=2.10.0"));
        assert!(!yes("2.10.0rc1", "==2.10.0"));
        assert!(!yes("1.0.post1", "==1.0"));
        assert!(!yes("2.1.0+cu121", "==2.1.0+cu118"));
        assert!(yes("2.1.0+cu121", "==2.1.0"));
        assert!(yes("13.1.0.3", ">=13.1.0.3,<=13.1.1.3"));
        assert!(!yes("1.0.1", "!=1.0.*"));
        assert!(yes("3.9.0", "~=3.9"));
        assert!(yes("3.8.1", "~=3.8.0"));
        assert!(!yes("3.9.0", "~=3.8.0"));
        assert!(!yes("9.1.0.70", "==9.10.2.21"));
        assert!(!yes("13.2.0.1", ">=13.1.0.3,<=13.1.1.3"));
        assert!(yes("1.0", "==1.0.0"));
        assert!(yes("1.0", ""));
        assert_eq!(cmp_versions("2.10.0", "2.9.1"), Ordering::Greater);
        // "preview" is a pre-release spelling (PEP 440), not "pre" followed by junk.
        assert!(yes("1.0preview1", "==1.0rc1"));
        assert!(!yes("1.0preview1", ">=1.0"));
    }

    #[test]
    fn local_labels_are_ordered_and_equality_agrees_with_the_order() {
        let a = parse_version("2.4.1+cu124").unwrap();
        let b = parse_version("2.4.1+cu118").unwrap();
        assert_ne!(a, b);
        assert_ne!(a.cmp(&b), Ordering::Equal);
        assert_eq!(
            cmp_versions("2.4.1+cu124", "2.4.1+cu118"),
            Ordering::Greater
        );
        assert_eq!(cmp_versions("2.4.1", "2.4.1+cu118"), Ordering::Less);
        assert_eq!(parse_version("1!2.0").unwrap().epoch(), 1);
        assert_eq!(cmp_versions("1!1.0", "2.0"), Ordering::Greater);
    }

    #[test]
    fn nothing_unparsable_is_satisfied() {
        for (version, spec) in [
            ("lolwat", ">=1.0"),
            ("2.5.1", ">=banana"),
            ("2.5.1", "=>2.0"),
            ("2.5.1", "~=1"),
            ("", "==1.0"),
        ] {
            assert!(satisfies(version, spec).is_err(), "{version} {spec}");
            assert!(!holds(version, spec), "{version} {spec}");
        }
        let e = satisfies("french toast", ">=1").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("\"french toast\" is not a PEP 440 version"),
            "{e}"
        );
        // Unparsable text sorts first, consistently in both directions.
        assert_eq!(cmp_versions("junk", "0.1"), Ordering::Less);
        assert_eq!(cmp_versions("0.1", "junk"), Ordering::Greater);
    }

    /// The packaging project's own test vectors (`.ci/gen-pep440-vectors` extracts them from
    /// its sdist on PyPI).
    fn vectors() -> serde_json::Value {
        let text = include_str!("../tests/fixtures/pep440/packaging-25.0.json");
        serde_json::from_str(text).unwrap()
    }

    fn strings(v: &serde_json::Value) -> Vec<&str> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect()
    }

    #[test]
    fn packaging_versions_parse_and_sort_in_its_order() {
        let v = vectors();
        let ordered = strings(&v["ordered_versions"]);
        assert!(ordered.len() > 50);
        let parsed: Vec<PyVersion> = ordered.iter().map(|s| parse_version(s).unwrap()).collect();
        for (i, a) in parsed.iter().enumerate() {
            for (j, b) in parsed.iter().enumerate() {
                assert_eq!(a.cmp(b), i.cmp(&j), "{} vs {}", ordered[i], ordered[j]);
                assert_eq!(a == b, i == j, "{} == {}", ordered[i], ordered[j]);
                assert_eq!(cmp_versions(ordered[i], ordered[j]), i.cmp(&j));
            }
        }
        for bad in strings(&v["invalid_versions"]) {
            assert!(parse_version(bad).is_err(), "{bad} parsed");
        }
        let pairs = v["normalized"].as_array().unwrap();
        assert!(pairs.len() > 90);
        for pair in pairs {
            let (spelling, normal) = (pair[0].as_str().unwrap(), pair[1].as_str().unwrap());
            let got = parse_version(spelling).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(got.to_string(), normal, "{spelling}");
        }
    }

    #[test]
    fn packaging_specifiers_hold_as_it_says() {
        let v = vectors();
        for bad in strings(&v["invalid_specifiers"]) {
            assert!(satisfies("1.0", bad).is_err(), "{bad} parsed");
        }
        let mut n = 0;
        let mut wrong = Vec::new();
        for key in ["contains", "identity", "ignores_local"] {
            for row in v[key].as_array().unwrap() {
                let (version, spec) = (row[0].as_str().unwrap(), row[1].as_str().unwrap());
                let expected = row[2].as_bool().unwrap();
                if yes(version, spec) != expected {
                    wrong.push(format!("{key}: {version} in {spec} should be {expected}"));
                }
                n += 1;
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
        assert!(n > 170, "{n} cases");
    }

    #[test]
    fn markers() {
        let env = MarkerEnv::new(Some("3.11"), &["Cublas".to_string()]);
        let m = |s| marker_holds(s, &env).unwrap();
        assert!(m("(sys_platform == 'linux' and platform_machine == 'x86_64' or sys_platform == 'win32' and platform_machine == 'AMD64') and extra == 'cublas'") == cfg!(target_arch = "x86_64"));
        assert!(!m("extra == 'cufft'"));
        assert!(!m("extra=='cufft'"));
        assert!(m(
            "platform_system == \"Linux\" or platform_system == \"Windows\""
        ));
        assert!(!m("platform_system == \"Windows\""));
        assert!(!m("python_version < \"3.11\""));
        assert!(m("python_version >= \"3.9\""));
        assert!(m("\"3.10\" <= python_version"));
        assert!(m("garbage ((( "));
    }

    #[test]
    fn a_marker_nested_too_deeply_is_an_error_not_a_stack_overflow() {
        let env = MarkerEnv::new(Some("3.11"), &[]);
        let nested = |n: usize| format!("{}os_name == 'posix'{}", "(".repeat(n), ")".repeat(n));
        assert_eq!(marker_holds(&nested(MAX_MARKER_DEPTH), &env), Ok(true));
        assert_eq!(
            marker_holds(&nested(MAX_MARKER_DEPTH + 1), &env),
            Err(MarkerError::TooDeep)
        );
        // Deep enough to overflow a 2 MiB probe thread's stack without the bound; unbalanced too.
        for marker in [nested(100_000), "(".repeat(100_000)] {
            let e = marker_holds(&marker, &env).unwrap_err();
            assert_eq!(
                e.to_string(),
                "marker too deeply nested (more than 32 levels of parentheses)"
            );
        }
    }
}
