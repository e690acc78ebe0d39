//! The parts of Python packaging gpudoctor needs to read wheels' metadata the way pip does:
//! PEP 440 versions and specifiers, and PEP 508 environment markers — evaluated for Linux on
//! this machine and the environment's Python, without running Python.

use std::cmp::Ordering;
use std::collections::HashSet;

/// A PEP 440 version: release numbers, pre-release (a/b/rc), post, dev, local label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PyVersion {
    pub release: Vec<u64>,
    /// (0 = a, 1 = b, 2 = rc, number)
    pub pre: Option<(u8, u64)>,
    pub post: Option<u64>,
    pub dev: Option<u64>,
    pub local: Option<String>,
}

/// Release numbers, then (phase, number) for pre-release, post and dev.
type SortKey = (Vec<u64>, (u8, u64), (u8, u64), (u8, u64));

impl PyVersion {
    pub fn parse(s: &str) -> Option<PyVersion> {
        let s = s.trim().trim_start_matches(['v', 'V']).to_ascii_lowercase();
        let (public, local) = match s.split_once('+') {
            Some((p, l)) => (p.to_string(), Some(l.to_string())),
            None => (s.clone(), None),
        };
        let bytes = public.as_bytes();
        let mut i = 0;
        let mut release = Vec::new();
        loop {
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            if start == i {
                return None;
            }
            release.push(public[start..i].parse().ok()?);
            if i < bytes.len()
                && bytes[i] == b'.'
                && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)
            {
                i += 1;
                continue;
            }
            break;
        }
        let rest = &public[i..];
        let (mut pre, mut post, mut dev) = (None, None, None);
        let mut r = rest.trim_start_matches(['.', '-', '_']);
        let num = |t: &str| -> (u64, usize) {
            let t = t.trim_start_matches(['.', '-', '_']);
            let digits: String = t.chars().take_while(char::is_ascii_digit).collect();
            (digits.parse().unwrap_or(0), digits.len())
        };
        for (tag, kind) in [
            ("rc", 2u8),
            ("c", 2),
            ("alpha", 0),
            ("a", 0),
            ("beta", 1),
            ("b", 1),
            // Longest spelling first: "pre" would take the head of "preview".
            ("preview", 2),
            ("pre", 2),
        ] {
            if let Some(t) = r.strip_prefix(tag) {
                let (n, used) = num(t);
                pre = Some((kind, n));
                r = t.trim_start_matches(['.', '-', '_']);
                r = &r[used..];
                r = r.trim_start_matches(['.', '-', '_']);
                break;
            }
        }
        for tag in ["post", "rev", "r"] {
            if let Some(t) = r.strip_prefix(tag) {
                let (n, used) = num(t);
                post = Some(n);
                r = t.trim_start_matches(['.', '-', '_']);
                r = &r[used..];
                r = r.trim_start_matches(['.', '-', '_']);
                break;
            }
        }
        if let Some(t) = r.strip_prefix("dev") {
            let (n, used) = num(t);
            dev = Some(n);
            r = &t.trim_start_matches(['.', '-', '_'])[used..];
        }
        if !r.is_empty() {
            return None;
        }
        Some(PyVersion {
            release,
            pre,
            post,
            dev,
            local,
        })
    }

    /// The ordering key PEP 440 defines (release, then pre/post/dev).
    fn key(&self) -> SortKey {
        let mut release = self.release.clone();
        while release.len() > 1 && release.last() == Some(&0) {
            release.pop();
        }
        // A dev release of a final sorts before its pre-releases; pre < final < post.
        let pre = match (self.pre, self.post, self.dev) {
            (Some((k, n)), _, _) => (1, (k as u64) << 32 | n),
            (None, None, Some(_)) => (0, 0),
            _ => (2, 0),
        };
        let post = match self.post {
            Some(n) => (1, n),
            None => (0, 0),
        };
        let dev = match self.dev {
            Some(n) => (0, n),
            None => (1, 0),
        };
        (release, (pre.0, pre.1), post, dev)
    }
}

impl PartialOrd for PyVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for PyVersion {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key().cmp(&other.key())
    }
}

/// Compares two version strings; unparsable ones compare by their numeric parts.
pub fn cmp_versions(a: &str, b: &str) -> Ordering {
    match (PyVersion::parse(a), PyVersion::parse(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        _ => a.cmp(b),
    }
}

/// Whether `version` satisfies a PEP 440 specifier list, as pip decides it (pre-releases
/// are not excluded here: what is installed is judged, not what to install).
pub fn satisfies(version: &str, spec: &str) -> bool {
    let Some(v) = PyVersion::parse(version) else {
        return true;
    };
    spec.split(',')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .all(|clause| clause_holds(&v, clause))
}

fn clause_holds(v: &PyVersion, clause: &str) -> bool {
    let ops = ["===", "==", ">=", "<=", "~=", "!=", ">", "<"];
    let Some(op) = ops.iter().find(|o| clause.starts_with(**o)) else {
        return true;
    };
    let want = clause[op.len()..].trim();
    if *op == "===" {
        return want == format_version(v);
    }
    // `==1.2.*` / `!=1.2.*`: prefix match on release components.
    if let Some(prefix) = want.strip_suffix(".*") {
        let Some(p) = PyVersion::parse(prefix) else {
            return true;
        };
        let matches = v.release.len() >= p.release.len()
            && v.release[..p.release.len()] == p.release[..]
            || (p.release.iter().skip(v.release.len()).all(|x| *x == 0)
                && v.release.iter().zip(&p.release).all(|(a, b)| a == b));
        return if *op == "!=" { !matches } else { matches };
    }
    let Some(w) = PyVersion::parse(want) else {
        return true;
    };
    // A local label in the specifier must match; without one, any local label matches.
    let v_cmp = if w.local.is_none() {
        PyVersion {
            local: None,
            ..v.clone()
        }
    } else {
        v.clone()
    };
    let ord = v_cmp.cmp(&w);
    let local_ok = w.local.is_none() || w.local == v.local;
    match *op {
        "==" => ord == Ordering::Equal && local_ok,
        "!=" => !(ord == Ordering::Equal && local_ok),
        ">=" => ord != Ordering::Less,
        "<=" => ord != Ordering::Greater,
        ">" => ord == Ordering::Greater && !(v.post.is_some() && same_release(v, &w)),
        "<" => {
            ord == Ordering::Less && !(v.pre.is_some() && w.pre.is_none() && same_release(v, &w))
        }
        "~=" => {
            if w.release.len() < 2 {
                return true;
            }
            let prefix = &w.release[..w.release.len() - 1];
            ord != Ordering::Less
                && v.release.len() >= prefix.len()
                && v.release[..prefix.len()] == prefix[..]
        }
        _ => true,
    }
}

fn same_release(a: &PyVersion, b: &PyVersion) -> bool {
    let trim = |r: &[u64]| {
        let mut r = r.to_vec();
        while r.len() > 1 && r.last() == Some(&0) {
            r.pop();
        }
        r
    };
    trim(&a.release) == trim(&b.release)
}

fn format_version(v: &PyVersion) -> String {
    v.release
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(".")
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

fn normalize(name: &str) -> String {
    crate::probes::python_sites::normalize(name)
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
        _ => satisfies(v, &format!("{op}{w}")),
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

    #[test]
    fn pep440_edge_cases() {
        assert!(satisfies("9.10.2.21", "==9.10.2.21"));
        assert!(!satisfies("20.0", "~=2.1"));
        assert!(satisfies("2.5", "~=2.1"));
        assert!(!satisfies("12.80.1", "==12.8.*"));
        assert!(satisfies("12.8.93", "==12.8.*"));
        assert!(!satisfies("2.10.0.dev20250101", ">=2.10.0"));
        assert!(!satisfies("2.10.0rc1", "==2.10.0"));
        assert!(!satisfies("1.0.post1", "==1.0"));
        assert!(!satisfies("2.1.0+cu121", "==2.1.0+cu118"));
        assert!(satisfies("2.1.0+cu121", "==2.1.0"));
        assert!(satisfies("13.1.0.3", ">=13.1.0.3,<=13.1.1.3"));
        assert!(!satisfies("1.0.1", "!=1.0.*"));
        assert!(satisfies("3.9.0", "~=3.9"));
        assert!(satisfies("1.0", "==1.0.0"));
        assert_eq!(cmp_versions("2.10.0", "2.9.1"), Ordering::Greater);
        // "preview" is a pre-release spelling (PEP 440), not "pre" followed by junk.
        assert!(satisfies("1.0preview1", "==1.0rc1"));
        assert!(!satisfies("1.0preview1", ">=1.0"));
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
