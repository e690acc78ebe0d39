//! GD014–GD015: PyTorch's caching-allocator configuration (PYTORCH_ALLOC_CONF,
//! formerly PYTORCH_CUDA_ALLOC_CONF). Keys, value types and ranges follow
//! c10/core/AllocatorConfig.cpp and c10/cuda/CUDAAllocatorConfig.cpp; the tokenizer
//! there splits on `, : [ ]` and drops spaces, and so does this one. A bad value
//! or unknown key makes torch raise a RuntimeError at the first CUDA allocation.

use super::{Outcome, Rule};
use crate::codes;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;
use crate::subject::SubjectKind;

pub const RULE: Rule = Rule {
    name: "alloc_conf",
    codes: &[codes::GD014, codes::GD015],
    views: &[],
    checks: "PyTorch allocator configuration is valid",
    judges: &[SubjectKind::RuledVariables],
    run,
};

#[derive(Clone, Copy)]
enum Kind {
    /// Whole megabytes, at least this many.
    MegabytesAtLeast(u64),
    /// A fraction strictly between 0 and 1.
    OpenFraction,
    /// A fraction in [0, 1].
    ClosedFraction,
    Bool,
    PowerOfTwoAtMost(u64),
    Roundup,
    Backend,
    /// A whole number above zero.
    Positive,
}

/// Every key PyTorch accepts, with its value type.
const KEYS: &[(&str, Kind)] = &[
    ("max_split_size_mb", Kind::MegabytesAtLeast(20)),
    ("max_non_split_rounding_mb", Kind::MegabytesAtLeast(20)),
    ("garbage_collection_threshold", Kind::OpenFraction),
    ("roundup_power2_divisions", Kind::Roundup),
    ("expandable_segments", Kind::Bool),
    ("pinned_use_background_threads", Kind::Bool),
    ("backend", Kind::Backend),
    ("release_lock_on_cudamalloc", Kind::Bool),
    ("pinned_use_cuda_host_register", Kind::Bool),
    // ROCm spellings, accepted by CUDA builds too.
    ("release_lock_on_hipmalloc", Kind::Bool),
    ("pinned_use_hip_host_register", Kind::Bool),
    ("pinned_num_register_threads", Kind::PowerOfTwoAtMost(128)),
    ("pinned_reserve_segment_size_mb", Kind::Positive),
    ("graph_capture_record_stream_reuse", Kind::Bool),
    ("per_process_memory_fraction", Kind::ClosedFraction),
];

/// Keys only the native caching allocator reads; backend:cudaMallocAsync ignores them.
const NATIVE_ONLY: &[&str] = &[
    "max_split_size_mb",
    "max_non_split_rounding_mb",
    "garbage_collection_threshold",
    "roundup_power2_divisions",
    "expandable_segments",
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllocConfError {
    pub message: String,
    pub suggestion: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllocConf {
    pub pairs: Vec<(String, String)>,
    pub errors: Vec<AllocConfError>,
    /// Settings PyTorch accepts but ignores.
    pub ignored: Vec<String>,
}

fn tokenize(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut buf = String::new();
    for ch in s.chars() {
        match ch {
            ',' | ':' | '[' | ']' => {
                if !buf.is_empty() {
                    out.push(std::mem::take(&mut buf));
                }
                out.push(ch.to_string());
            }
            ' ' => {}
            _ => buf.push(ch),
        }
    }
    if !buf.is_empty() {
        out.push(buf);
    }
    out
}

fn err(message: impl Into<String>) -> AllocConfError {
    AllocConfError {
        message: message.into(),
        suggestion: None,
    }
}

/// The value with every error replaced by its suggestion (`key=value` → `key:value`, a
/// misspelt key → the known one, `true` → `True`) and empty entries dropped, when that leaves
/// a value without errors; None when some error has no replacement.
pub fn corrected_alloc_conf(value: &str) -> Option<String> {
    // Entries are split at commas outside brackets (roundup_power2_divisions:[256:1,>:8]).
    let mut entries = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, ch) in value.char_indices() {
        match ch {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                entries.push(&value[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    entries.push(&value[start..]);
    let mut out: Vec<String> = Vec::new();
    for entry in entries.iter().map(|e| e.trim()).filter(|e| !e.is_empty()) {
        let conf = parse_alloc_conf(entry);
        match conf.errors.as_slice() {
            [] => out.push(entry.to_string()),
            [e] => {
                let s = e.suggestion.as_deref()?;
                if let Some(key) = s
                    .strip_prefix("did you mean ")
                    .and_then(|k| k.strip_suffix('?'))
                {
                    let (_, v) = entry.split_once(':')?;
                    out.push(format!("{key}:{v}"));
                } else {
                    out.push(s.to_string());
                }
            }
            _ => return None,
        }
    }
    let fixed = out.join(",");
    (!fixed.is_empty() && parse_alloc_conf(&fixed).errors.is_empty()).then_some(fixed)
}

pub fn parse_alloc_conf(value: &str) -> AllocConf {
    let tokens = tokenize(value);
    let mut conf = AllocConf::default();
    let mut i = 0;
    while i < tokens.len() {
        let key = tokens[i].clone();
        if key == "," {
            conf.errors
                .push(err("empty entry (two commas in a row, or a leading comma)"));
            i += 1;
            continue;
        }
        if let Some((k, v)) = key.split_once('=') {
            conf.errors.push(AllocConfError {
                message: format!("{key:?}: options are written key:value, not key=value"),
                suggestion: Some(format!("{k}:{v}")),
            });
            i += 1;
            skip_separator(&tokens, &mut i, &mut conf);
            continue;
        }
        let Some(&(_, kind)) = KEYS.iter().find(|(k, _)| *k == key) else {
            // A near miss of a known key is a typo; anything else may be a key of a newer
            // PyTorch than this table knows, so it is only a warning.
            match closest_key(&key) {
                Some(k) => conf.errors.push(AllocConfError {
                    message: format!("unknown option {key:?}"),
                    suggestion: Some(format!("did you mean {k}?")),
                }),
                None => conf.ignored.push(format!(
                    "unknown option {key:?}: a PyTorch release that does not know it raises \"Unrecognized key\" at the first CUDA allocation"
                )),
            }
            // Skip to the next top-level comma.
            let mut depth = 0;
            while i < tokens.len() && !(tokens[i] == "," && depth == 0) {
                match tokens[i].as_str() {
                    "[" => depth += 1,
                    "]" => depth -= 1,
                    _ => {}
                }
                i += 1;
            }
            i += 1;
            continue;
        };
        if tokens.get(i + 1).map(String::as_str) != Some(":") {
            conf.errors.push(err(format!(
                "{key}: expected ':' and a value after the key"
            )));
            i += 1;
            skip_separator(&tokens, &mut i, &mut conf);
            continue;
        }
        i += 2;
        let value = if tokens.get(i).map(String::as_str) == Some("[") {
            let start = i;
            while i < tokens.len() && tokens[i] != "]" {
                i += 1;
            }
            if i >= tokens.len() {
                conf.errors
                    .push(err(format!("{key}: '[' without a closing ']'")));
                break;
            }
            i += 1;
            tokens[start..i].concat()
        } else {
            match tokens.get(i) {
                Some(t) if t != "," => {
                    i += 1;
                    t.clone()
                }
                _ => {
                    conf.errors.push(err(format!("{key}: missing value")));
                    skip_separator(&tokens, &mut i, &mut conf);
                    continue;
                }
            }
        };
        if let Err(e) = check_value(&key, kind, &value) {
            conf.errors.push(e);
        }
        if conf.pairs.iter().any(|(k, _)| *k == key) {
            conf.ignored.push(format!(
                "{key} is given twice; the last value ({value}) wins"
            ));
        }
        conf.pairs.push((key, value));
        skip_separator(&tokens, &mut i, &mut conf);
    }
    let get = |k: &str| {
        conf.pairs
            .iter()
            .rev()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
    };
    if get("backend").as_deref() == Some("cudaMallocAsync") {
        for k in NATIVE_ONLY {
            if get(k).is_some() {
                conf.ignored.push(format!("{k} is ignored with backend:cudaMallocAsync (it configures the native allocator)"));
            }
        }
    }
    if get("pinned_num_register_threads").is_some()
        && get("pinned_use_cuda_host_register").is_none_or(|v| v != "True")
    {
        conf.ignored.push(
            "pinned_num_register_threads has no effect unless pinned_use_cuda_host_register:True"
                .to_string(),
        );
    }
    conf
}

fn skip_separator(tokens: &[String], i: &mut usize, conf: &mut AllocConf) {
    match tokens.get(*i).map(String::as_str) {
        None => {}
        Some(",") => {
            *i += 1;
            // A trailing comma is accepted: PyTorch stops at the end of the tokens.
        }
        Some(t) => {
            conf.errors.push(err(format!("expected ',' before {t:?}")));
            while *i < tokens.len() && tokens[*i] != "," {
                *i += 1;
            }
            *i += 1;
        }
    }
}

/// PyTorch reads numbers with std::stoull / std::stod: the leading number counts and
/// trailing characters are ignored ("128MB" is 128); no leading number throws.
fn leading_u64(s: &str) -> Option<u64> {
    let digits: String = s
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().ok()
}

fn leading_f64(s: &str) -> Option<f64> {
    let s = s.trim_start();
    (1..=s.len())
        .rev()
        .filter(|&n| s.is_char_boundary(n))
        .find_map(|n| s[..n].parse::<f64>().ok())
}

fn check_value(key: &str, kind: Kind, v: &str) -> Result<(), AllocConfError> {
    let bad = |what: &str| err(format!("{key}:{v}: {what}"));
    match kind {
        Kind::MegabytesAtLeast(min) => match leading_u64(v) {
            Some(n) if n >= min => Ok(()),
            Some(_) => Err(bad(&format!("must be at least {min} (megabytes)"))),
            None => Err(bad("must be a whole number of megabytes")),
        },
        Kind::OpenFraction => match leading_f64(v) {
            Some(x) if x > 0.0 && x < 1.0 => Ok(()),
            _ => Err(bad("must be a number between 0.0 and 1.0 (exclusive)")),
        },
        Kind::ClosedFraction => match leading_f64(v) {
            Some(x) if (0.0..=1.0).contains(&x) => Ok(()),
            _ => Err(bad("must be a number between 0.0 and 1.0")),
        },
        // PyTorch's tokenizer accepts exactly "True" and "False".
        Kind::Bool => match v {
            "True" | "False" => Ok(()),
            _ => Err(AllocConfError {
                message: format!("{key}:{v}: must be True or False (capitalised)"),
                suggestion: match v.to_ascii_lowercase().as_str() {
                    "1" | "yes" | "on" | "true" => Some(format!("{key}:True")),
                    "0" | "no" | "off" | "false" => Some(format!("{key}:False")),
                    _ => None,
                },
            }),
        },
        Kind::PowerOfTwoAtMost(max) => match leading_u64(v) {
            Some(n) if n.is_power_of_two() && n <= max => Ok(()),
            _ => Err(bad(&format!("must be a power of two no larger than {max}"))),
        },
        Kind::Positive => match leading_u64(v) {
            Some(n) if n > 0 => Ok(()),
            _ => Err(bad("must be a whole number above 0")),
        },
        Kind::Backend => match v {
            "native" | "cudaMallocAsync" => Ok(()),
            _ => Err(AllocConfError {
                message: format!("{key}:{v}: must be native or cudaMallocAsync"),
                suggestion: v
                    .eq_ignore_ascii_case("cudamallocasync")
                    .then(|| "backend:cudaMallocAsync".to_string()),
            }),
        },
        Kind::Roundup => check_roundup(v).map_err(|m| bad(&m)),
    }
}

/// `4` or `[256:1,512:2,>:8]`: divisions are powers of two (0 disables), bounds powers
/// of two or `>`. An empty list and a trailing comma inside it are accepted, as PyTorch does.
fn check_roundup(v: &str) -> Result<(), String> {
    let pow2_or_zero = |s: &str| leading_u64(s).filter(|n| *n == 0 || n.is_power_of_two());
    if let Some(inner) = v.strip_prefix('[') {
        let inner = inner.strip_suffix(']').ok_or("missing ']'")?;
        for item in inner.split(',').filter(|i| !i.is_empty()) {
            let (bound, div) = item
                .split_once(':')
                .ok_or(format!("{item:?} must be SIZE:DIVISIONS"))?;
            if bound != ">" && !leading_u64(bound).is_some_and(|b| b.is_power_of_two()) {
                return Err(format!(
                    "interval {bound:?} must be a power of two (MB) or '>'"
                ));
            }
            pow2_or_zero(div).ok_or(format!("divisions {div:?} must be a power of two or 0"))?;
        }
        Ok(())
    } else {
        match leading_u64(v) {
            Some(n) if n.is_power_of_two() => Ok(()),
            _ => Err("must be a power of two, or a list like [256:1,512:2,>:8]".into()),
        }
    }
}

fn closest_key(key: &str) -> Option<&'static str> {
    let lower = key.to_ascii_lowercase();
    let len = lower.chars().count();
    let limit = |k: &str| 3.max(k.len() / 4);
    KEYS.iter()
        // The distance is at least the length difference: a key much longer than any
        // known one (a megabyte from a saved report) is compared with none.
        .filter(|(k, _)| len.abs_diff(k.len()) <= limit(k))
        .map(|(k, _)| (edit_distance(&lower, k), *k))
        .filter(|(d, k)| *d <= limit(k))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

fn run(snap: &Snapshot) -> Outcome {
    let Some(env) = &snap.environment else {
        return Outcome::NotApplicable("environment probe did not run".into());
    };
    let new = env.value(crate::envvars::PYTORCH_ALLOC_CONF.name);
    let old = env.value(crate::envvars::PYTORCH_CUDA_ALLOC_CONF.name);
    let mut out = Vec::new();
    // The torch a user's `python` gets, when the pytorch probe found one.
    let torch = snap
        .python
        .as_ref()
        .and_then(|envs| envs.iter().find(|e| e.primary))
        .and_then(|e| e.torch.as_ref())
        .map(|t| {
            t.version
                .get()
                .cloned()
                .unwrap_or_else(|| t.dist_version.clone())
        });
    let older_than = |minor: u32| {
        torch
            .as_deref()
            .and_then(crate::compat::torch::release_minor)
            .is_some_and(|(ma, mi)| (ma, mi) < (2, minor))
    };
    if let (Some(t), Some(v), None) = (&torch, new, old) {
        if older_than(9) {
            out.push(
                Finding::new(codes::GD015, Severity::Warning, format!("torch {t} ignores PYTORCH_ALLOC_CONF (read from torch 2.9 on)"))
                    .detail("Before torch 2.9 the caching allocator reads only PYTORCH_CUDA_ALLOC_CONF, so these settings have no effect with the installed torch.")
                    .evidence(Subject::env("PYTORCH_ALLOC_CONF"), format!("PYTORCH_ALLOC_CONF={v}"), "environment")
                    .fix_cmd("Use the name this torch reads", crate::sh!("export PYTORCH_CUDA_ALLOC_CONF={}", v)),
            );
        }
    }
    for (name, value) in [
        (crate::envvars::PYTORCH_ALLOC_CONF.name, new),
        (crate::envvars::PYTORCH_CUDA_ALLOC_CONF.name, old),
    ] {
        let Some(value) = value else { continue };
        let conf = parse_alloc_conf(value);
        let fact = Subject::env(name);
        let shown = format!("{name}={value}");
        // Options newer than the installed torch: it raises "Unrecognized CachingAllocator option".
        if let Some(t) = &torch {
            for (key, minor) in [("expandable_segments", 1u32)] {
                if value.contains(key) && older_than(minor) {
                    out.push(
                        Finding::new(codes::GD014, Severity::Error, format!("torch {t} does not know {name} option {key} (added in torch 2.{minor})"))
                            .detail(format!("This torch raises \"RuntimeError: Unrecognized CachingAllocator option: {key}\" at the first CUDA allocation."))
                            .evidence(fact.clone(), &shown, "environment")
                            .fix_text(format!("Remove {key} from {name}, or upgrade torch to 2.{minor} or newer")),
                    );
                }
            }
        }
        if !conf.errors.is_empty() {
            let mut f = Finding::new(codes::GD014, Severity::Error, format!("{name} is invalid: {}", conf.errors[0].message))
                .detail("PyTorch parses this variable at the first CUDA allocation and raises a RuntimeError on an unknown option or a bad value, so every CUDA program using torch fails at its first tensor.")
                .evidence(fact.clone(), &shown, "environment");
            for e in &conf.errors {
                f = f.evidence(fact.clone(), e.message.clone(), "gpudoctor's parse");
            }
            let fixed: Vec<String> = conf
                .errors
                .iter()
                .filter_map(|e| e.suggestion.clone())
                .collect();
            f = match corrected_alloc_conf(value) {
                Some(v) => f.fix_cmd(
                    "Set it as PyTorch reads it",
                    crate::sh!("export {}={}", name, v),
                ),
                None if !fixed.is_empty() => {
                    f.fix_text(format!("Write it as: {}", fixed.join(", ")))
                }
                None => f,
            };
            out.push(
                f.fix_text("Options are comma-separated key:value pairs, e.g. expandable_segments:True,max_split_size_mb:128")
                    .fix_cmd("Or unset it to use PyTorch's defaults", crate::sh!("unset {}", name)),
            );
        }
        if !conf.ignored.is_empty() {
            let mut f = Finding::new(codes::GD015, Severity::Warning, format!("{name}: {}", conf.ignored[0]))
                .detail("PyTorch accepts these settings but they do nothing here, so the configuration does not do what it seems to.")
                .evidence(fact.clone(), &shown, "environment");
            for i in conf.ignored.iter().skip(1) {
                f = f.evidence(fact.clone(), i.clone(), "gpudoctor's parse");
            }
            out.push(f.fix_text("Remove the ignored settings, or switch backend:native if you meant to tune the native allocator"));
        }
    }
    if let (Some(n), Some(o)) = (new, old) {
        if n != o {
            out.push(
                Finding::new(codes::GD015, Severity::Warning, "PYTORCH_ALLOC_CONF and PYTORCH_CUDA_ALLOC_CONF are both set and differ")
                    .detail("PyTorch 2.9 and later read PYTORCH_ALLOC_CONF and ignore PYTORCH_CUDA_ALLOC_CONF when both are set; older releases read only PYTORCH_CUDA_ALLOC_CONF. Which settings apply depends on the torch version.")
                    .evidence(Subject::env("PYTORCH_ALLOC_CONF"), format!("PYTORCH_ALLOC_CONF={n}"), "environment")
                    .evidence(Subject::env("PYTORCH_CUDA_ALLOC_CONF"), format!("PYTORCH_CUDA_ALLOC_CONF={o}"), "environment")
                    .fix_cmd(
                        if older_than(9) {
                            format!("Keep one: torch {} reads PYTORCH_CUDA_ALLOC_CONF, so drop the name it ignores", torch.as_deref().unwrap_or("?"))
                        } else {
                            "Keep one: the new name for torch 2.9+".to_string()
                        },
                        if older_than(9) { "unset PYTORCH_ALLOC_CONF" } else { "unset PYTORCH_CUDA_ALLOC_CONF" },
                    ),
            );
        }
    }
    Outcome::Checked(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_with_replaceable_errors_is_corrected_whole() {
        assert_eq!(
            corrected_alloc_conf("expandable_segments=True").as_deref(),
            Some("expandable_segments:True")
        );
        assert_eq!(
            corrected_alloc_conf("expandable_segments:true,,max_split_size_mb=128").as_deref(),
            Some("expandable_segments:True,max_split_size_mb:128")
        );
        assert_eq!(
            corrected_alloc_conf("expandable_segment:True,roundup_power2_divisions:[256:1,>:8]")
                .as_deref(),
            Some("expandable_segments:True,roundup_power2_divisions:[256:1,>:8]")
        );
        // No replacement for a bad number: no corrected value.
        assert_eq!(corrected_alloc_conf("max_split_size_mb:0"), None);
    }

    #[test]
    fn a_huge_unknown_key_is_compared_with_no_known_key() {
        let key = "x".repeat(1 << 20);
        let t = std::time::Instant::now();
        assert_eq!(closest_key(&key), None);
        assert_eq!(
            closest_key("expandable_segment"),
            Some("expandable_segments")
        );
        // Each known key was an edit-distance matrix over the whole key: seconds.
        assert!(
            t.elapsed() < std::time::Duration::from_millis(500),
            "{:?}",
            t.elapsed()
        );
    }

    #[test]
    fn valid_configurations() {
        for ok in [
            "expandable_segments:True",
            "max_split_size_mb:128,garbage_collection_threshold:0.6",
            "roundup_power2_divisions:[256:1,512:2,1024:4,>:8]",
            "roundup_power2_divisions:4",
            "backend:cudaMallocAsync",
            " expandable_segments : True , max_split_size_mb:512",
            "pinned_use_cuda_host_register:True,pinned_num_register_threads:8",
            "expandable_segments:True,",
            "roundup_power2_divisions:[]",
            "roundup_power2_divisions:[256:1,]",
            "max_split_size_mb:128MB",
            "release_lock_on_hipmalloc:True",
        ] {
            let c = parse_alloc_conf(ok);
            assert!(c.errors.is_empty(), "{ok}: {:?}", c.errors);
        }
    }

    #[test]
    fn invalid_configurations() {
        let c = parse_alloc_conf("expandable_segments=True");
        assert_eq!(
            c.errors[0].suggestion.as_deref(),
            Some("expandable_segments:True")
        );
        let c = parse_alloc_conf("max_split_size:128");
        assert_eq!(
            c.errors[0].suggestion.as_deref(),
            Some("did you mean max_split_size_mb?")
        );
        assert!(!parse_alloc_conf("max_split_size_mb:10").errors.is_empty());
        assert!(!parse_alloc_conf("garbage_collection_threshold:1.5")
            .errors
            .is_empty());
        assert!(!parse_alloc_conf("expandable_segments:1").errors.is_empty());
        assert!(!parse_alloc_conf("roundup_power2_divisions:3")
            .errors
            .is_empty());
        assert!(!parse_alloc_conf("roundup_power2_divisions:[256:1,512:3]")
            .errors
            .is_empty());
        assert!(!parse_alloc_conf("roundup_power2_divisions:[256:1")
            .errors
            .is_empty());
        assert!(!parse_alloc_conf("backend:async").errors.is_empty());
        assert!(!parse_alloc_conf("expandable_segments:true")
            .errors
            .is_empty());
        assert_eq!(
            parse_alloc_conf("expandable_segments:true").errors[0]
                .suggestion
                .as_deref(),
            Some("expandable_segments:True")
        );
        assert!(!parse_alloc_conf("pinned_reserve_segment_size_mb:0")
            .errors
            .is_empty());
        assert!(!parse_alloc_conf("expandable_segments").errors.is_empty());
        assert!(!parse_alloc_conf("pinned_num_register_threads:256")
            .errors
            .is_empty());
    }

    #[test]
    fn unknown_keys_without_a_near_miss_are_only_warnings() {
        let c = parse_alloc_conf("throw_on_cudamalloc_oom:True");
        assert!(c.errors.is_empty());
        assert_eq!(c.ignored.len(), 1);
    }

    #[test]
    fn ignored_settings() {
        let c = parse_alloc_conf("backend:cudaMallocAsync,expandable_segments:True");
        assert!(c.errors.is_empty());
        assert_eq!(c.ignored.len(), 1);
    }

    mod on_snapshots {
        use super::super::*;
        use crate::testing::*;

        #[test]
        fn unset_or_valid_is_clean() {
            assert_clean(run(&healthy()));
            let mut s = healthy();
            set_env(
                &mut s,
                "PYTORCH_CUDA_ALLOC_CONF",
                "expandable_segments:True",
            );
            assert_clean(run(&s));
        }

        #[test]
        fn an_invalid_value_is_an_error_with_the_corrected_spelling() {
            let mut s = healthy();
            set_env(
                &mut s,
                "PYTORCH_CUDA_ALLOC_CONF",
                "expandable_segments=True",
            );
            let f = only(run(&s), codes::GD014, Severity::Error);
            assert!(
                f.title.contains("PYTORCH_CUDA_ALLOC_CONF is invalid"),
                "{}",
                f.title
            );
            assert_eq!(
                first_cmd(&f),
                "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
            );
            assert!(fixes_mention(&f, "unset PYTORCH_CUDA_ALLOC_CONF"));
            // A value with an error that has no replacement keeps the advice and the unset.
            set_env(&mut s, "PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:0");
            let f = only(run(&s), codes::GD014, Severity::Error);
            assert_eq!(first_cmd(&f), "unset PYTORCH_CUDA_ALLOC_CONF");
        }

        #[test]
        fn an_option_newer_than_torch_is_an_error() {
            let mut s = healthy();
            torch_mut(&mut s).version =
                crate::fact::Fact::value("version.py", "2.0.1+cu118".to_string());
            set_env(
                &mut s,
                "PYTORCH_CUDA_ALLOC_CONF",
                "expandable_segments:True",
            );
            let f = only(run(&s), codes::GD014, Severity::Error);
            assert!(f.title.contains("does not know"), "{}", f.title);
        }

        #[test]
        fn the_new_name_with_an_old_torch_is_a_warning() {
            let mut s = healthy();
            set_env(&mut s, "PYTORCH_ALLOC_CONF", "expandable_segments:True");
            let f = only(run(&s), codes::GD015, Severity::Warning);
            assert!(
                f.title.contains("ignores PYTORCH_ALLOC_CONF"),
                "{}",
                f.title
            );
            assert_eq!(
                first_cmd(&f),
                "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
            );
        }

        #[test]
        fn both_names_set_differently_is_a_warning() {
            let mut s = healthy();
            set_env(&mut s, "PYTORCH_ALLOC_CONF", "expandable_segments:True");
            set_env(&mut s, "PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:128");
            let f = only(run(&s), codes::GD015, Severity::Warning);
            assert!(f.title.contains("both set and differ"), "{}", f.title);
            // The snapshot's torch 2.4.1 reads PYTORCH_CUDA_ALLOC_CONF only.
            assert_eq!(first_cmd(&f), "unset PYTORCH_ALLOC_CONF");
        }

        #[test]
        fn settings_the_async_backend_ignores_are_a_warning() {
            let mut s = healthy();
            set_env(
                &mut s,
                "PYTORCH_CUDA_ALLOC_CONF",
                "backend:cudaMallocAsync,max_split_size_mb:128",
            );
            let f = only(run(&s), codes::GD015, Severity::Warning);
            assert!(f.title.contains("max_split_size_mb"), "{}", f.title);
        }

        #[test]
        fn not_applicable_without_the_environment_probe() {
            let mut s = healthy();
            s.environment = None;
            assert_na(run(&s));
        }
    }
}
