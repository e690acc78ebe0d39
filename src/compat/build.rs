//! Compiles the compatibility tables of `src/compat/data/*.toml` into Rust `static` arrays
//! (`OUT_DIR/compat/<file>.rs`, `include!`d by the table modules), so nothing parses TOML
//! at run time. A malformed file fails the build naming the file, the row and the field.
//!
//! Each data file holds arrays of rows (`[[release]]`, `[[build]]`, ...) and optionally:
//! `[defaults]`, fields every row takes unless it sets them; `[template.NAME]`, fields a row
//! takes with `use = "NAME"` (or a list of names, later ones winning); `[sets]`, named lists
//! of numbers or compute capabilities that a list field may name instead of listing. A row's
//! own fields win. An unknown or missing field, template or set is an error, and so is a
//! template or set no row uses.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use toml::{Table, Value};

/// How a field is read from TOML and written as Rust.
#[derive(Clone, Copy)]
enum Kind {
    Str,
    /// A string in which `{version}` stands for the row's `version`.
    VersionStr,
    OptStr,
    U32,
    OptU32,
    /// A CUDA version, "12.4".
    Cuda,
    OptCuda,
    /// A compute capability, "8.6".
    Cc,
    /// A list of compute capabilities; absent: None.
    OptCcs,
    /// A (major, minor, patch) version, "1.17.8".
    Triple,
    /// A list of strings.
    Strs,
    /// One of an enum's variants: its Rust path and (TOML name, variant) pairs.
    Enum(&'static str, &'static [(&'static str, &'static str)]),
    Bool,
    /// A list of numbers, or the name of one in `[sets]`.
    U32s,
    Platform,
    Platforms,
    Delivery,
    /// `[["torchvision", "0.29.0"], ...]`: a list of string pairs.
    Pairs,
}
use Kind::*;

/// One generated item: `pub static NAME: &[TY] = &[...]` from the array `rows` of `file`.
struct Spec {
    file: &'static str,
    rows: &'static str,
    item: &'static str,
    /// The item's doc comment: the order the lookups rely on.
    doc: &'static str,
    /// The row type: a struct's name, or a tuple type, "(u32, &[u32])", whose rows are
    /// written as tuples of their fields.
    ty: &'static str,
    fields: &'static [(&'static str, Kind)],
}

const PACKAGE: &[(&str, Kind)] = &[
    ("package", Str),
    ("version", Str),
    ("requirement", VersionStr),
    ("index_url", OptStr),
    ("delivery", Delivery),
    ("cuda", OptStr),
    ("cudnn_major", OptU32),
    ("min_driver", OptStr),
    ("pythons", U32s),
    ("platforms", Platforms),
    ("sass", U32s),
    ("ptx", U32s),
    ("exact", U32s),
    ("min_cc", OptU32),
    ("torch", OptStr),
    ("companions", Pairs),
    ("source", Str),
];

const fn package(file: &'static str) -> Spec {
    Spec {
        file,
        rows: "release",
        item: "pub static RELEASES",
        doc: "Newest first: `recommend` takes the first row that fits.",
        ty: "PackageRelease",
        fields: PACKAGE,
    }
}

const TABLES: &[Spec] = &[
    package("onnxruntime"),
    package("vllm"),
    package("xformers"),
    package("bitsandbytes"),
    package("flash_attn"),
    package("jax"),
    package("tensorflow"),
    Spec {
        file: "torch",
        rows: "build",
        item: "pub static BUILDS",
        doc: "Newest first; within a release, newest CUDA first, x86_64 then aarch64.",
        ty: "TorchBuild",
        fields: &[
            ("release", Str),
            ("variant", Str),
            ("platform", Platform),
            ("sass", U32s),
            ("ptx", U32s),
            ("source", Str),
        ],
    },
    Spec {
        file: "torch_pythons",
        rows: "release",
        item: "pub static TORCH_PYTHONS",
        doc: "Newest first, the releases of `torch::BUILDS`.",
        ty: "TorchPythons",
        fields: &[
            ("release", Str),
            ("x86_64", U32s),
            ("aarch64", U32s),
            ("source", Str),
        ],
    },
    Spec {
        file: "companions",
        rows: "release",
        item: "pub static RELEASES",
        doc: "Oldest first per package, as PyPI lists them.",
        ty: "CompanionRelease",
        fields: &[
            ("package", Str),
            ("version", Str),
            ("requires_torch", Str),
            ("stable_abi", Bool),
        ],
    },
    Spec {
        file: "companions",
        rows: "major_only_cuda_check",
        item: "pub static MAJOR_ONLY_CUDA_CHECK",
        doc: "(package, version, source): the first release whose import check \
              (`_check_cuda_version`) compares only the CUDA major with torch's; older ones \
              raise \"compiled with different CUDA versions\" on any difference.",
        ty: "(&str, &str, &str)",
        fields: &[("package", Str), ("version", Str), ("source", Str)],
    },
    Spec {
        file: "driver",
        rows: "toolkit",
        item: "pub static TOOLKIT_DRIVERS",
        doc: "CUDA RN Table 3, every row, in release order. 12.7 was never released.",
        ty: "ToolkitDriverRow",
        fields: &[
            ("toolkit", Str),
            ("version", Cuda),
            ("min_linux", Str),
            ("min_windows", OptStr),
            ("source", Str),
        ],
    },
    Spec {
        file: "driver",
        rows: "family",
        item: "pub static FAMILY_MINIMUMS",
        doc: "Minor-version compatibility, per CUDA major (CUDA 10 and older have none).",
        ty: "FamilyMinimum",
        fields: &[
            ("major", U32),
            ("min_linux", Str),
            ("min_windows", OptStr),
            ("source", Str),
        ],
    },
    Spec {
        file: "driver",
        rows: "branch",
        item: "pub static DRIVER_BRANCHES",
        doc: "The CUDA version each driver branch reports, by branch (ascending).",
        ty: "BranchRow",
        fields: &[("branch", U32), ("max_cuda", Cuda), ("source", Str)],
    },
    Spec {
        file: "driver",
        rows: "forward_compat",
        item: "pub static FORWARD_COMPAT_MATRIX",
        doc: "The forward-compatibility support matrix: each `cuda-compat` package and the \
              base branches it is marked C for.",
        ty: "ForwardCompatRow",
        fields: &[("package", Cuda), ("compatible_bases", U32s)],
    },
    Spec {
        file: "memory_bandwidth",
        rows: "memory",
        item: "pub static MEMORY_BANDWIDTH",
        doc: "By PCI device id (ascending).",
        ty: "MemoryBandwidthRow",
        fields: &[
            ("device_id", Str),
            ("name", Str),
            ("healthy_mbps", U32),
            ("minimum_mbps", U32),
            ("line", U32),
        ],
    },
    Spec {
        file: "xid",
        rows: "xid",
        item: "pub static XIDS",
        doc: "By code (ascending).",
        ty: "XidInfo",
        fields: &[
            ("code", U32),
            ("name", Str),
            ("action", Enum("XidAction", XID_ACTIONS)),
            ("application", Bool),
            ("source", Str),
        ],
    },
    Spec {
        file: "container_toolkit",
        rows: "advisory",
        item: "pub const ADVISORIES",
        doc: "Sorted by `fixed_in`.",
        ty: "Advisory",
        fields: &[
            ("fixed_in", Triple),
            ("cves", Strs),
            ("what", Str),
            ("source", Str),
        ],
    },
    Spec {
        file: "arch",
        rows: "architecture",
        item: "pub static ARCHITECTURES",
        doc: "One row per CC, ascending.",
        ty: "ArchRow",
        fields: &[
            ("cc", Cc),
            ("arch", Str),
            ("examples", Str),
            ("first_cuda", OptCuda),
            ("last_cuda", OptCuda),
            ("tegra", Bool),
            ("min_driver_branch", OptU32),
            ("last_driver_branch", OptU32),
            ("kernel_modules", Enum("KernelModules", KERNEL_MODULES)),
            ("source", Str),
        ],
    },
    Spec {
        file: "compiler_targets",
        rows: "verified",
        item: "static VERIFIED_TARGETS",
        doc: "Read from the toolkit binaries: `ptxas --help` (11.7–12.9) and \
              `nvcc --list-gpu-code` (13.x).",
        ty: "VerifiedTargets",
        fields: &[("from", Cuda), ("to", Cuda), ("sms", U32s), ("source", Str)],
    },
    Spec {
        file: "compiler_targets",
        rows: "released",
        item: "static RELEASED_TOOLKITS",
        doc: "(major, minors): released CUDA minors per major, from 9.0 on, ascending.",
        ty: "(u32, &[u32])",
        fields: &[("major", U32), ("minors", U32s)],
    },
    gpu_models("data_center", "static DATA_CENTER"),
    gpu_models("quadro", "static QUADRO"),
    gpu_models("quadro_rtx", "static QUADRO_RTX"),
    gpu_models("rtx_a", "static RTX_A"),
    gpu_models("t_series", "static T_SERIES"),
    gpu_models("geforce_rtx", "static GEFORCE_RTX"),
    gpu_models("geforce_gtx", "static GEFORCE_GTX"),
    gpu_models("geforce_gt", "static GEFORCE_GT"),
    gpu_models("geforce_mx", "static GEFORCE_MX"),
    Spec {
        file: "capabilities",
        rows: "capability",
        item: "pub static CAPABILITIES",
        doc: "In the order they are shown.",
        ty: "Capability",
        fields: &[
            ("key", Str),
            ("title", Str),
            ("min_cc", Cc),
            ("only", OptCcs),
            ("below", Enum("Support", SUPPORT)),
            ("note", Str),
            ("source", Str),
        ],
    },
];

/// A model-word table of one product family (src/compat/arch.rs `gpu_from_name`).
const fn gpu_models(rows: &'static str, item: &'static str) -> Spec {
    Spec {
        file: "gpu_models",
        rows,
        item,
        doc: "Model words as the driver's GPU name spells them (\"A100\", \"4090\").",
        ty: "Model",
        fields: &[("word", Str), ("cc", Cc), ("source", Str)],
    }
}

const KERNEL_MODULES: &[(&str, &str)] = &[
    ("proprietary_only", "ProprietaryOnly"),
    ("either", "Either"),
    ("open_only", "OpenOnly"),
    ("not_applicable", "NotApplicable"),
    ("unknown", "Unknown"),
];

const SUPPORT: &[(&str, &str)] = &[("yes", "Yes"), ("no", "No"), ("emulated", "Emulated")];

const XID_ACTIONS: &[(&str, &str)] = &[
    ("none", "None"),
    ("restart_app", "RestartApp"),
    ("reset_when_convenient", "ResetWhenConvenient"),
    ("reset_gpu", "ResetGpu"),
    ("reboot_node", "RebootNode"),
    ("run_diagnostics", "RunDiagnostics"),
];

fn main() {
    println!("cargo:rerun-if-changed=src/compat/build.rs");
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("compat");
    std::fs::create_dir_all(&out).expect("creating OUT_DIR/compat");
    let files: BTreeSet<&str> = TABLES.iter().map(|t| t.file).collect();
    for file in files {
        let rel = format!("src/compat/data/{file}.toml");
        println!("cargo:rerun-if-changed={rel}");
        match generate(&root.join(&rel), file) {
            Ok(code) => write_if_changed(&out.join(format!("{file}.rs")), &code),
            Err(e) => {
                // A build script's stderr is shown when it fails: name the file and stop.
                eprintln!("error: {rel}: {e}");
                std::process::exit(1);
            }
        }
    }
}

fn write_if_changed(path: &Path, code: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(code) {
        std::fs::write(path, code).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    }
}

/// The Rust items of one data file.
fn generate(path: &Path, file: &str) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let doc: Table = text.parse().map_err(|e: toml::de::Error| e.to_string())?;
    let tables: Vec<&Spec> = TABLES.iter().filter(|t| t.file == file).collect();
    let empty = Table::new();
    let section = |name: &str| match doc.get(name) {
        None => Ok(&empty),
        Some(Value::Table(t)) => Ok(t),
        Some(_) => Err(format!("[{name}] must be a table")),
    };
    let defaults = section("defaults")?;
    let templates = section("template")?;
    let sets = section("sets")?;
    for key in doc.keys() {
        let known = ["defaults", "template", "sets"].contains(&key.as_str())
            || tables.iter().any(|t| t.rows == key);
        if !known {
            return Err(format!("unknown top-level key `{key}`"));
        }
    }
    for key in defaults.keys() {
        if !tables
            .iter()
            .any(|t| t.fields.iter().any(|(f, _)| f == key))
        {
            return Err(format!("[defaults]: unknown field `{key}`"));
        }
    }
    let mut code =
        format!("// Generated by src/compat/build.rs from src/compat/data/{file}.toml.\n");
    for (name, list) in sets {
        let ident = set_ident(name)?;
        let (ty, items) = if is_cc_set(list) {
            let ccs = list.as_array().into_iter().flatten().map(cc);
            (
                "crate::compat::ComputeCapability",
                ccs.collect::<Result<Vec<_>, _>>(),
            )
        } else {
            ("u32", u32_list(list))
        };
        let items = items.map_err(|e| format!("[sets] {name}: {e}"))?;
        writeln!(code, "const {ident}: &[{ty}] = &[{}];", items.join(", ")).unwrap();
    }
    let mut used_sets = BTreeSet::new();
    let mut used_templates = BTreeSet::new();
    for t in tables {
        let rows = match doc.get(t.rows) {
            Some(Value::Array(rows)) => rows,
            _ => return Err(format!("no [[{}]] rows", t.rows)),
        };
        writeln!(code, "#[doc = {:?}]\n{}: &[{}] = &[", t.doc, t.item, t.ty).unwrap();
        for (i, row) in rows.iter().enumerate() {
            let fields = resolve(t, row, defaults, templates, &mut used_templates)
                .and_then(|f| emit_row(t, &f, sets, &mut used_sets))
                .map_err(|e| format!("[[{}]] row {}{}: {e}", t.rows, i + 1, row_name(row)))?;
            writeln!(code, "    {fields},").unwrap();
        }
        code.push_str("];\n");
    }
    if let Some(unused) = sets.keys().find(|k| !used_sets.contains(k.as_str())) {
        return Err(format!("[sets] {unused}: no row uses it"));
    }
    if let Some(unused) = templates
        .keys()
        .find(|k| !used_templates.contains(k.as_str()))
    {
        return Err(format!("[template.{unused}]: no row uses it"));
    }
    Ok(code)
}

/// What names a row in an error: its version or release, where it has one.
fn row_name(row: &Value) -> String {
    const KEYS: [&str; 10] = [
        "version", "release", "key", "word", "toolkit", "cc", "code", "branch", "major", "package",
    ];
    KEYS.iter()
        .find_map(|k| row.get(k))
        .map(|v| {
            format!(
                " ({k})",
                k = v.as_str().map_or(v.to_string(), str::to_string)
            )
        })
        .unwrap_or_default()
}

/// A row's fields after defaults and templates.
fn resolve(
    t: &Spec,
    row: &Value,
    defaults: &Table,
    templates: &Table,
    used_templates: &mut BTreeSet<String>,
) -> Result<Table, String> {
    let row = row.as_table().ok_or("a row must be a table")?;
    let known = |k: &str| t.fields.iter().any(|(f, _)| *f == k);
    let mut fields: Table = defaults
        .iter()
        .filter(|(k, _)| known(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let uses = match row.get("use") {
        None => vec![],
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| v.as_str().ok_or("`use` must name templates"))
            .collect::<Result<_, _>>()?,
        Some(_) => return Err("`use` must name templates".into()),
    };
    for name in uses {
        let template = templates
            .get(name)
            .and_then(Value::as_table)
            .ok_or_else(|| format!("no [template.{name}]"))?;
        used_templates.insert(name.to_string());
        for (k, v) in template {
            if !known(k) {
                return Err(format!("[template.{name}]: unknown field `{k}`"));
            }
            fields.insert(k.clone(), v.clone());
        }
    }
    for (k, v) in row {
        if k == "use" {
            continue;
        }
        if !known(k) {
            return Err(format!("unknown field `{k}`"));
        }
        fields.insert(k.clone(), v.clone());
    }
    Ok(fields)
}

/// The row as a Rust struct literal (or tuple).
fn emit_row(
    t: &Spec,
    fields: &Table,
    sets: &Table,
    used_sets: &mut BTreeSet<String>,
) -> Result<String, String> {
    let mut parts = Vec::new();
    for (name, kind) in t.fields {
        let value = emit_field(*kind, fields.get(*name), fields, sets, used_sets)
            .map_err(|e| format!("field `{name}`: {e}"))?;
        parts.push(match t.ty.starts_with('(') {
            false => format!("{name}: {value}"),
            true => value,
        });
    }
    Ok(match t.ty.starts_with('(') {
        false => format!("{} {{ {} }}", t.ty, parts.join(", ")),
        true => format!("({})", parts.join(", ")),
    })
}

fn emit_field(
    kind: Kind,
    v: Option<&Value>,
    row: &Table,
    sets: &Table,
    used_sets: &mut BTreeSet<String>,
) -> Result<String, String> {
    let str_of = |v: &Value| v.as_str().map(str::to_owned).ok_or("expected a string");
    let v = match (kind, v) {
        (OptStr | OptU32 | OptCuda | OptCcs, None) => return Ok("None".into()),
        (Strs, None) => return Ok("&[]".into()),
        (_, None) => return Err("missing".into()),
        (_, Some(v)) => v,
    };
    Ok(match kind {
        Str => format!("{:?}", str_of(v)?),
        VersionStr => {
            let version = row
                .get("version")
                .and_then(Value::as_str)
                .unwrap_or_default();
            format!("{:?}", str_of(v)?.replace("{version}", version))
        }
        OptStr => format!("Some({:?})", str_of(v)?),
        U32 => u32_of(v)?,
        OptU32 => format!("Some({})", u32_of(v)?),
        Cuda => cuda(v)?,
        OptCuda => format!("Some({})", cuda(v)?),
        Cc => cc(v)?,
        OptCcs => match v {
            Value::String(name) => format!("Some({})", set_ref(name, true, sets, used_sets)?),
            v => {
                let list = v.as_array().ok_or(
                    "expected a list of compute capabilities or the name of one in [sets]",
                )?;
                let ccs = list.iter().map(cc).collect::<Result<Vec<_>, _>>()?;
                format!("Some(&[{}])", ccs.join(", "))
            }
        },
        Triple => format!("({})", numbers(v, 3)?.join(", ")),
        Strs => {
            let list = v.as_array().ok_or("expected a list of strings")?;
            let items = list
                .iter()
                .map(|s| {
                    s.as_str()
                        .map(|s| format!("{s:?}"))
                        .ok_or("expected a list of strings")
                })
                .collect::<Result<Vec<_>, _>>()?;
            format!("&[{}]", items.join(", "))
        }
        Enum(ty, variants) => {
            let name = v.as_str().unwrap_or_default();
            match variants.iter().find(|(n, _)| *n == name) {
                Some((_, variant)) => format!("{ty}::{variant}"),
                None => {
                    let names: Vec<_> = variants.iter().map(|(n, _)| *n).collect();
                    return Err(format!("expected one of {}, got {v}", names.join(", ")));
                }
            }
        }
        Bool => v.as_bool().ok_or("expected true or false")?.to_string(),
        U32s => match v {
            Value::String(name) => set_ref(name, false, sets, used_sets)?,
            v => format!("&[{}]", u32_list(v)?.join(", ")),
        },
        Platform => platform(v)?,
        Platforms => {
            let list = v.as_array().ok_or("expected a list of platforms")?;
            let names = list.iter().map(platform).collect::<Result<Vec<_>, _>>()?;
            format!("&[{}]", names.join(", "))
        }
        Delivery => match v.as_str() {
            Some("wheel") => "Delivery::Wheel".into(),
            Some("source_build") => "Delivery::SourceBuild".into(),
            _ => return Err("expected \"wheel\" or \"source_build\"".into()),
        },
        Pairs => {
            let pairs = v
                .as_array()
                .ok_or("expected a list of [name, version] pairs")?
                .iter()
                .map(|p| match p.as_array().map(Vec::as_slice) {
                    Some([Value::String(a), Value::String(b)]) => Ok(format!("({a:?}, {b:?})")),
                    _ => Err("expected a [name, version] pair of strings".to_string()),
                })
                .collect::<Result<Vec<_>, _>>()?;
            format!("&[{}]", pairs.join(", "))
        }
    })
}

fn u32_list(v: &Value) -> Result<Vec<String>, String> {
    v.as_array()
        .ok_or("expected a list of numbers or the name of one in [sets]")?
        .iter()
        .map(u32_of)
        .collect()
}

/// A set of compute capabilities ("8.0") rather than of numbers.
fn is_cc_set(list: &Value) -> bool {
    list.as_array()
        .is_some_and(|l| l.first().is_some_and(Value::is_str))
}

/// A field naming one of [sets]: the set's Rust name, once its kind is checked.
fn set_ref(
    name: &str,
    ccs: bool,
    sets: &Table,
    used_sets: &mut BTreeSet<String>,
) -> Result<String, String> {
    let list = sets
        .get(name)
        .ok_or_else(|| format!("no set `{name}` in [sets]"))?;
    if is_cc_set(list) != ccs {
        let want = if ccs {
            "compute capabilities"
        } else {
            "numbers"
        };
        return Err(format!("set `{name}` is not a list of {want}"));
    }
    used_sets.insert(name.to_string());
    set_ident(name)
}

/// A set's Rust name: `turing_to_blackwell` → `TURING_TO_BLACKWELL`.
fn set_ident(name: &str) -> Result<String, String> {
    let ok = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !ok {
        return Err(format!(
            "set name `{name}`: use lowercase letters, digits and `_`"
        ));
    }
    Ok(name.to_ascii_uppercase())
}

fn cuda(v: &Value) -> Result<String, String> {
    Ok(format!(
        "crate::compat::CudaVersion::new({})",
        numbers(v, 2)?.join(", ")
    ))
}

fn cc(v: &Value) -> Result<String, String> {
    Ok(format!(
        "crate::compat::ComputeCapability::new({})",
        numbers(v, 2)?.join(", ")
    ))
}

/// "12.4" (n = 2) or "1.17.8" (n = 3): exactly n dot-separated numbers.
fn numbers(v: &Value, n: usize) -> Result<Vec<String>, String> {
    let text = v.as_str().ok_or("expected a version string")?;
    let parts: Vec<String> = text
        .split('.')
        .map(|p| p.parse::<u32>().map(|n| n.to_string()))
        .collect::<Result<_, _>>()
        .map_err(|_| format!("`{text}`: expected {n} numbers separated by dots"))?;
    if parts.len() != n {
        return Err(format!("`{text}`: expected {n} numbers separated by dots"));
    }
    Ok(parts)
}

fn u32_of(v: &Value) -> Result<String, String> {
    v.as_integer()
        .and_then(|n| u32::try_from(n).ok())
        .map(|n| n.to_string())
        .ok_or_else(|| format!("expected a number from 0 to {}, got {v}", u32::MAX))
}

fn platform(v: &Value) -> Result<String, String> {
    match v.as_str() {
        Some("x86_64") => Ok("Platform::X86_64".into()),
        Some("aarch64") => Ok("Platform::Aarch64".into()),
        _ => Err(format!("expected \"x86_64\" or \"aarch64\", got {v}")),
    }
}
