//! The condition language of `NVIDIA_REQUIRE_*` variables, as the NVIDIA container runtime
//! evaluates it before it starts a container (libnvidia-container, src/cli/dsl.c and
//! src/cli/configure.c):
//!
//! - alternatives are separated by spaces; the condition holds when one alternative holds;
//! - an alternative is a comma-separated list of `NAME OP VALUE` that must all hold;
//! - OP is one of `=`, `!=`, `<`, `<=`, `>`, `>=`; names are case-insensitive:
//!   `cuda` (the driver's CUDA version), `driver` (the driver version), `arch` (the GPU's
//!   compute capability) and `brand` (the GPU's brand: only `=` and `!=`);
//! - versions compare component by component as integers, trailing zeros ignored
//!   (`12.4` = `12.4.0`); a value with anything but digits and dots is an invalid expression.
//!
//! Every `NVIDIA_REQUIRE_*` variable must hold, for every GPU the container gets. A failed one
//! stops the container with `unsatisfied condition: FIRST-ALTERNATIVE` (with "please update your
//! driver to a newer version, or use an earlier cuda container" when it starts with `cuda>=`).
//! When no `NVIDIA_REQUIRE_CUDA` is set, an image with `CUDA_VERSION` (NVIDIA's older CUDA
//! images) gets `cuda>=MAJOR.MINOR` (nvidia-container-toolkit, internal/config/image/cuda_image.go).
//! `NVIDIA_DISABLE_REQUIRE` set to a true value (Go's strconv.ParseBool) turns the check off.

use std::cmp::Ordering;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Name {
    Cuda,
    Driver,
    Arch,
    Brand,
}

impl Name {
    fn as_str(self) -> &'static str {
        match self {
            Name::Cuda => "cuda",
            Name::Driver => "driver",
            Name::Arch => "arch",
            Name::Brand => "brand",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Op {
    fn parse(s: &str) -> Option<Op> {
        Some(match s {
            "=" => Op::Eq,
            "!=" => Op::Ne,
            "<" => Op::Lt,
            "<=" => Op::Le,
            ">" => Op::Gt,
            ">=" => Op::Ge,
            _ => return None,
        })
    }

    fn as_str(self) -> &'static str {
        match self {
            Op::Eq => "=",
            Op::Ne => "!=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
        }
    }

    fn holds(self, ord: Ordering) -> bool {
        match self {
            Op::Eq => ord == Ordering::Equal,
            Op::Ne => ord != Ordering::Equal,
            Op::Lt => ord == Ordering::Less,
            Op::Le => ord != Ordering::Greater,
            Op::Gt => ord == Ordering::Greater,
            Op::Ge => ord != Ordering::Less,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    pub name: Name,
    pub op: Op,
    pub value: String,
}

impl std::fmt::Display for Condition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}{}{}",
            self.name.as_str(),
            self.op.as_str(),
            self.value
        )
    }
}

/// One `NVIDIA_REQUIRE_*` value, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    pub text: String,
    pub alternatives: Vec<Vec<Condition>>,
}

impl Requirement {
    /// The first alternative as the runtime prints it in its error.
    pub fn first_alternative(&self) -> &str {
        self.text.split(' ').find(|s| !s.is_empty()).unwrap_or("")
    }

    /// The version a leading `cuda>=X.Y` asks for (the image's CUDA).
    #[cfg(test)]
    pub fn cuda_minimum(&self) -> Option<&str> {
        let first = self.alternatives.first()?;
        first
            .iter()
            .find(|c| c.name == Name::Cuda && matches!(c.op, Op::Ge | Op::Gt))
            .map(|c| c.value.as_str())
    }
}

/// Parses a requirement; Err says what the runtime would call an invalid expression.
pub fn parse(text: &str) -> Result<Requirement, String> {
    let mut alternatives = Vec::new();
    for alt in text.split(' ').filter(|a| !a.is_empty()) {
        let mut all = Vec::new();
        for expr in alt.split(',').filter(|e| !e.is_empty()) {
            all.push(parse_condition(expr)?);
        }
        alternatives.push(all);
    }
    Ok(Requirement {
        text: text.to_string(),
        alternatives,
    })
}

fn parse_condition(expr: &str) -> Result<Condition, String> {
    let start = expr
        .find(['<', '>', '=', '!'])
        .filter(|&i| i > 0)
        .ok_or_else(|| format!("invalid expression {expr:?}: no NAME before the operator"))?;
    let rest = &expr[start..];
    let op_len = rest
        .find(|c| !matches!(c, '<' | '>' | '=' | '!'))
        .unwrap_or(rest.len());
    let op = Op::parse(&rest[..op_len])
        .ok_or_else(|| format!("invalid expression {expr:?}: unknown operator"))?;
    let value = &rest[op_len..];
    if value.is_empty() {
        return Err(format!("invalid expression {expr:?}: no value"));
    }
    let name = match expr[..start].to_ascii_lowercase().as_str() {
        "cuda" => Name::Cuda,
        "driver" => Name::Driver,
        "arch" => Name::Arch,
        "brand" => Name::Brand,
        other => {
            return Err(format!(
                "invalid expression {expr:?}: unknown name {other:?}"
            ))
        }
    };
    if name != Name::Brand && !is_version(value) {
        return Err(format!(
            "invalid expression {expr:?}: {value:?} is not a version"
        ));
    }
    if name == Name::Brand && !matches!(op, Op::Eq | Op::Ne) {
        return Err(format!(
            "invalid expression {expr:?}: brand compares only with = or !="
        ));
    }
    Ok(Condition {
        name,
        op,
        value: value.to_string(),
    })
}

fn is_version(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| c.is_ascii_digit() || c == '.')
        && s.contains(|c: char| c.is_ascii_digit())
}

/// dsl_compare_version: numeric components, trailing zeros insignificant.
pub fn compare_versions(a: &str, b: &str) -> Ordering {
    let parts = |s: &str| -> Vec<u64> {
        let mut v: Vec<u64> = s
            .split('.')
            .filter(|p| !p.is_empty())
            .map(|p| p.parse().unwrap_or(u64::MAX))
            .collect();
        while v.last() == Some(&0) {
            v.pop();
        }
        v
    };
    parts(a).cmp(&parts(b))
}

/// What the runtime knows when it checks: the driver, its CUDA version, and one GPU.
#[derive(Debug, Clone, Default)]
pub struct Host {
    /// The driver's CUDA version (`12.4`), as cuDriverGetVersion reports it.
    pub cuda: Option<String>,
    pub driver: Option<String>,
    /// Compute capability of the GPU (`9.0`).
    pub arch: Option<String>,
    /// NVML's brand name in lower case (`tesla`, `nvidia`, `geforce`, …).
    pub brand: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The alternative (its text) that holds.
    Satisfied(String),
    /// No alternative holds; the conditions that failed, one per alternative.
    Unsatisfied(Vec<String>),
    /// No alternative is known to hold and some depend on facts not known here (named).
    Unknown(Vec<&'static str>),
    /// The runtime reaches an expression it cannot read and stops with "invalid expression".
    Invalid(String),
}

/// Evaluates `text` as dsl_evaluate does: alternatives left to right, stopping at the first
/// that holds; within one, conditions left to right, stopping at the first that fails. An
/// expression is parsed only when reached, so one the runtime never reaches cannot fail it.
/// A condition on a fact not known here leaves its alternative undecided; an invalid
/// expression after it in the same alternative is then undecided too.
pub fn evaluate(text: &str, host: &Host) -> Verdict {
    let mut failed = Vec::new();
    let mut unknown: Vec<&'static str> = Vec::new();
    for alt in text.split(' ').filter(|a| !a.is_empty()) {
        let mut alt_unknown: Vec<&'static str> = Vec::new();
        let mut alt_failed = None;
        for expr in alt.split(',').filter(|e| !e.is_empty()) {
            let c = match parse_condition(expr) {
                Ok(c) => c,
                Err(e) if alt_unknown.is_empty() => return Verdict::Invalid(e),
                Err(_) => break,
            };
            let fact = match c.name {
                Name::Cuda => host.cuda.as_deref(),
                Name::Driver => host.driver.as_deref(),
                Name::Arch => host.arch.as_deref(),
                Name::Brand => host.brand.as_deref(),
            };
            let Some(fact) = fact else {
                alt_unknown.push(c.name.as_str());
                continue;
            };
            let holds = match c.name {
                Name::Brand => fact.eq_ignore_ascii_case(&c.value) == (c.op == Op::Eq),
                _ => c.op.holds(compare_versions(fact, &c.value)),
            };
            if !holds {
                alt_failed = Some(c.to_string());
                break;
            }
        }
        match alt_failed {
            Some(f) => failed.push(f),
            None if alt_unknown.is_empty() => return Verdict::Satisfied(alt.to_string()),
            None => {
                for u in alt_unknown {
                    if !unknown.contains(&u) {
                        unknown.push(u);
                    }
                }
            }
        }
    }
    if unknown.is_empty() {
        Verdict::Unsatisfied(failed)
    } else {
        Verdict::Unknown(unknown)
    }
}

/// Go's strconv.ParseBool truth values, as the runtime reads NVIDIA_DISABLE_REQUIRE.
pub fn parse_bool(s: &str) -> Option<bool> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// The NVIDIA_REQUIRE_CUDA values of NVIDIA's published CUDA base images
/// (nvidia/cuda Dockerfiles, gitlab.com/nvidia/container-images/cuda, dist/*/base/Dockerfile).
#[cfg(test)]
pub const PUBLISHED: &[(&str, &str)] = &[
    (
        "12.4.1-base-ubuntu22.04",
        "cuda>=12.4 brand=tesla,driver>=470,driver<471 brand=unknown,driver>=470,driver<471 brand=nvidia,driver>=470,driver<471 brand=nvidiartx,driver>=470,driver<471 brand=geforce,driver>=470,driver<471 brand=geforcertx,driver>=470,driver<471 brand=quadro,driver>=470,driver<471 brand=quadrortx,driver>=470,driver<471 brand=titan,driver>=470,driver<471 brand=titanrtx,driver>=470,driver<471 brand=tesla,driver>=525,driver<526 brand=unknown,driver>=525,driver<526 brand=nvidia,driver>=525,driver<526 brand=nvidiartx,driver>=525,driver<526 brand=geforce,driver>=525,driver<526 brand=geforcertx,driver>=525,driver<526 brand=quadro,driver>=525,driver<526 brand=quadrortx,driver>=525,driver<526 brand=titan,driver>=525,driver<526 brand=titanrtx,driver>=525,driver<526 brand=tesla,driver>=535,driver<536 brand=unknown,driver>=535,driver<536 brand=nvidia,driver>=535,driver<536 brand=nvidiartx,driver>=535,driver<536 brand=geforce,driver>=535,driver<536 brand=geforcertx,driver>=535,driver<536 brand=quadro,driver>=535,driver<536 brand=quadrortx,driver>=535,driver<536 brand=titan,driver>=535,driver<536 brand=titanrtx,driver>=535,driver<536",
    ),
    (
        "12.8.1-base-ubuntu24.04",
        "cuda>=12.8 brand=unknown,driver>=470,driver<471 brand=grid,driver>=470,driver<471 brand=tesla,driver>=470,driver<471 brand=nvidia,driver>=470,driver<471 brand=quadro,driver>=470,driver<471 brand=quadrortx,driver>=470,driver<471 brand=nvidiartx,driver>=470,driver<471 brand=vapps,driver>=470,driver<471 brand=vpc,driver>=470,driver<471 brand=vcs,driver>=470,driver<471 brand=vws,driver>=470,driver<471 brand=cloudgaming,driver>=470,driver<471 brand=unknown,driver>=535,driver<536 brand=grid,driver>=535,driver<536 brand=tesla,driver>=535,driver<536 brand=nvidia,driver>=535,driver<536 brand=quadro,driver>=535,driver<536 brand=quadrortx,driver>=535,driver<536 brand=nvidiartx,driver>=535,driver<536 brand=vapps,driver>=535,driver<536 brand=vpc,driver>=535,driver<536 brand=vcs,driver>=535,driver<536 brand=vws,driver>=535,driver<536 brand=cloudgaming,driver>=535,driver<536 brand=unknown,driver>=550,driver<551 brand=grid,driver>=550,driver<551 brand=tesla,driver>=550,driver<551 brand=nvidia,driver>=550,driver<551 brand=quadro,driver>=550,driver<551 brand=quadrortx,driver>=550,driver<551 brand=nvidiartx,driver>=550,driver<551 brand=vapps,driver>=550,driver<551 brand=vpc,driver>=550,driver<551 brand=vcs,driver>=550,driver<551 brand=vws,driver>=550,driver<551 brand=cloudgaming,driver>=550,driver<551 brand=unknown,driver>=560,driver<561 brand=grid,driver>=560,driver<561 brand=tesla,driver>=560,driver<561 brand=nvidia,driver>=560,driver<561 brand=quadro,driver>=560,driver<561 brand=quadrortx,driver>=560,driver<561 brand=nvidiartx,driver>=560,driver<561 brand=vapps,driver>=560,driver<561 brand=vpc,driver>=560,driver<561 brand=vcs,driver>=560,driver<561 brand=vws,driver>=560,driver<561 brand=cloudgaming,driver>=560,driver<561 brand=unknown,driver>=565,driver<566 brand=grid,driver>=565,driver<566 brand=tesla,driver>=565,driver<566 brand=nvidia,driver>=565,driver<566 brand=quadro,driver>=565,driver<566 brand=quadrortx,driver>=565,driver<566 brand=nvidiartx,driver>=565,driver<566 brand=vapps,driver>=565,driver<566 brand=vpc,driver>=565,driver<566 brand=vcs,driver>=565,driver<566 brand=vws,driver>=565,driver<566 brand=cloudgaming,driver>=565,driver<566",
    ),
    ("13.0.0-base-ubuntu24.04", "cuda>=13.0"),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn host(cuda: &str, driver: &str, brand: Option<&str>) -> Host {
        Host {
            cuda: Some(cuda.into()),
            driver: Some(driver.into()),
            arch: Some("9.0".into()),
            brand: brand.map(str::to_string),
        }
    }

    #[test]
    fn every_published_value_parses() {
        for (tag, text) in PUBLISHED {
            let r = parse(text).unwrap_or_else(|e| panic!("{tag}: {e}"));
            assert!(r.cuda_minimum().is_some(), "{tag}");
            assert!(!r.alternatives.is_empty());
        }
    }

    #[test]
    fn a_new_enough_driver_satisfies_the_first_alternative() {
        let r = parse(PUBLISHED[1].1).unwrap();
        assert_eq!(
            evaluate(&r.text, &host("12.9", "575.51.03", None)),
            Verdict::Satisfied("cuda>=12.8".into())
        );
    }

    #[test]
    fn an_old_driver_outside_the_forward_compatible_branches_is_refused() {
        let r = parse(PUBLISHED[1].1).unwrap();
        match evaluate(&r.text, &host("12.2", "537.13", Some("tesla"))) {
            Verdict::Unsatisfied(failed) => assert_eq!(failed[0], "cuda>=12.8"),
            v => panic!("{v:?}"),
        }
        assert_eq!(r.first_alternative(), "cuda>=12.8");
    }

    #[test]
    fn a_listed_branch_and_brand_admit_an_older_driver() {
        let r = parse(PUBLISHED[1].1).unwrap();
        assert_eq!(
            evaluate(&r.text, &host("12.2", "535.183.01", Some("tesla"))),
            Verdict::Satisfied("brand=tesla,driver>=535,driver<536".into())
        );
        // Without the brand the branch alternatives cannot be decided.
        assert_eq!(
            evaluate(&r.text, &host("12.2", "535.183.01", None)),
            Verdict::Unknown(vec!["brand"])
        );
    }

    #[test]
    fn only_what_the_runtime_reaches_can_be_invalid() {
        let h = host("12.4", "550.54.15", None);
        // The first alternative holds: the runtime never reads the second.
        assert!(matches!(
            evaluate("cuda>=12.0 brand=x,driver>=abc", &h),
            Verdict::Satisfied(_)
        ));
        // It fails, so the second is read, and its second expression is invalid.
        assert!(matches!(
            evaluate("cuda>=12.8 driver>=550,driver>=abc", &h),
            Verdict::Invalid(e) if e.contains("driver>=abc")
        ));
        // A failed condition stops its alternative before the invalid one.
        assert_eq!(
            evaluate("cuda>=12.8,gpu>=1", &h),
            Verdict::Unsatisfied(vec!["cuda>=12.8".into()])
        );
    }

    #[test]
    fn versions_compare_like_the_runtime() {
        assert_eq!(compare_versions("12.4", "12.4.0"), Ordering::Equal);
        assert_eq!(compare_versions("12.10", "12.9"), Ordering::Greater);
        assert_eq!(compare_versions("535.183.01", "536"), Ordering::Less);
        assert!(Op::Lt.holds(compare_versions("535.183.01", "536")));
    }

    #[test]
    fn invalid_expressions_are_refused() {
        for bad in [
            "cuda",
            ">=12",
            "cuda>=",
            "cuda=>x",
            "gpu>=1",
            "brand>tesla",
            "cuda>=12.4a",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert_eq!(parse("").unwrap().alternatives.len(), 0);
        assert_eq!(
            parse("CUDA>=12.0").unwrap().alternatives[0][0].name,
            Name::Cuda
        );
    }

    #[test]
    fn disable_require_reads_like_go() {
        assert_eq!(parse_bool("true"), Some(true));
        assert_eq!(parse_bool("1"), Some(true));
        assert_eq!(parse_bool("yes"), None);
        assert_eq!(parse_bool("False"), Some(false));
    }
}
