//! Compute capabilities: architectures and their CUDA/driver support range,
//! the targets each nvcc can compile for, GPU model names → CC, and the
//! SASS/PTX compatibility rules. Facts from NVIDIA's CUDA Toolkit, Driver and Architecture
//! Matrix, the compiler targets the toolkits' own `ptxas --help` / `nvcc --list-gpu-code`
//! print, and NVIDIA's CUDA GPU lists; every row names its source.

#[cfg(test)]
use super::versions::ArchVariant;
use super::versions::{ComputeCapability, CudaVersion};
use serde::Serialize;

/// Which NVIDIA kernel module flavour an architecture can use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum KernelModules {
    /// Maxwell, Pascal, Volta (and Kepler, which predates the open modules).
    ProprietaryOnly,
    /// Turing and newer, where the open modules are the default since R560.
    Either,
    /// Blackwell: the proprietary modules are unsupported.
    OpenOnly,
    /// Jetson/Tegra ship their own driver stack.
    NotApplicable,
    Unknown,
}

// Every row's `kernel_modules`: https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/kernel-modules.html;
// NVIDIA blog "NVIDIA Transitions Fully Towards Open-Source GPU Kernel Modules".

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ArchRow {
    pub cc: ComputeCapability,
    pub arch: &'static str,
    pub examples: &'static str,
    /// First CUDA toolkit that compiles for this CC.
    pub first_cuda: Option<CudaVersion>,
    /// Last one; None while still supported.
    pub last_cuda: Option<CudaVersion>,
    /// Integrated Jetson/Tegra GPU: binary compatibility across minors does
    /// not apply ("not supported for Tegra").
    pub tegra: bool,
    /// First driver branch that runs this CC, where known.
    pub min_driver_branch: Option<u32>,
    /// Last driver branch that runs this CC; None while still supported.
    pub last_driver_branch: Option<u32>,
    pub kernel_modules: KernelModules,
    pub source: &'static str,
}

const fn cc(major: u32, minor: u32) -> ComputeCapability {
    ComputeCapability::new(major, minor)
}

// The rows of ARCHITECTURES: src/compat/data/arch.toml, compiled by build.rs.
include!(concat!(env!("OUT_DIR"), "/compat/arch.rs"));

pub fn arch_row(cc: ComputeCapability) -> Option<&'static ArchRow> {
    ARCHITECTURES.iter().find(|r| r.cc == cc)
}

fn is_tegra(cc: ComputeCapability) -> bool {
    arch_row(cc).is_some_and(|r| r.tegra)
}

/// Whether a cubin (SASS) for `target` runs on `device`: same major, device
/// minor >= target minor, and never across Tegra parts ("a cubin object
/// generated for compute capability X.y will only execute on devices of
/// compute capability X.z where z≥y"; "not supported for Tegra").
pub fn sass_runs_on(target: ComputeCapability, device: ComputeCapability) -> bool {
    if target == device {
        return true;
    }
    target.major == device.major
        && target.minor <= device.minor
        && !is_tegra(target)
        && !is_tegra(device)
}

/// Like [`sass_runs_on`] for suffixed targets: `sm_XYa` runs only on XY.
#[cfg(test)]
pub fn sass_variant_runs_on(
    target: ComputeCapability,
    variant: ArchVariant,
    device: ComputeCapability,
) -> bool {
    match variant {
        ArchVariant::ArchSpecific => target == device,
        ArchVariant::Generic | ArchVariant::FamilySpecific => sass_runs_on(target, device),
    }
}

/// Whether PTX for `target` can be JIT-compiled for `device`: any CC at or
/// above it, given a driver that knows that PTX ISA version.
pub fn ptx_runs_on(target: ComputeCapability, device: ComputeCapability) -> bool {
    target <= device
}

// SASS and PTX compatibility: CUDA C++ Programming Guide §Binary Compatibility
// (https://docs.nvidia.com/cuda/cuda-c-programming-guide/#binary-compatibility).

/// Real `sm_XY` targets an nvcc release can compile for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CompilerTargets {
    pub toolkit: CudaVersion,
    /// Sorted ascending, without the `a`/`f` variants.
    pub targets: Vec<ComputeCapability>,
    /// Set when `toolkit` is newer than known and the list of this release is assumed.
    pub assumed_from: Option<CudaVersion>,
    pub source: &'static str,
}

impl CompilerTargets {
    pub fn min(&self) -> ComputeCapability {
        self.targets.first().copied().unwrap_or(cc(0, 0))
    }

    pub fn max(&self) -> ComputeCapability {
        self.targets.last().copied().unwrap_or(cc(0, 0))
    }

    /// Exactly this `sm_XY` is in the list.
    pub fn supports(&self, target: ComputeCapability) -> bool {
        self.targets.contains(&target)
    }
}

struct VerifiedTargets {
    from: CudaVersion,
    to: CudaVersion,
    /// `sm_XY` numbers as nvcc prints them: 89 is 8.9, 120 is 12.0.
    sms: &'static [u32],
    source: &'static str,
}

impl VerifiedTargets {
    fn targets(&self) -> Vec<ComputeCapability> {
        self.sms.iter().map(|&n| cc(n / 10, n % 10)).collect()
    }
}

const fn v(major: u32, minor: u32) -> CudaVersion {
    CudaVersion::new(major, minor)
}

// The rows of VERIFIED_TARGETS and RELEASED_TOOLKITS: src/compat/data/compiler_targets.toml,
// compiled by build.rs.
include!(concat!(env!("OUT_DIR"), "/compat/compiler_targets.rs"));

/// The verified rows and the model names, for compat::sources.
pub(super) fn sourced_rows(push: &mut impl FnMut(&'static str, String, &str)) {
    for t in VERIFIED_TARGETS {
        push(
            "compiler targets",
            format!("CUDA {}–{}", t.from, t.to),
            t.source,
        );
    }
    let tables: [(&str, &[Model]); 9] = [
        ("data center", DATA_CENTER),
        ("Quadro", QUADRO),
        ("Quadro RTX", QUADRO_RTX),
        ("RTX A", RTX_A),
        ("T series", T_SERIES),
        ("GeForce RTX", GEFORCE_RTX),
        ("GeForce GTX", GEFORCE_GTX),
        ("GeForce GT", GEFORCE_GT),
        ("GeForce MX", GEFORCE_MX),
    ];
    for (family, models) in tables {
        for m in models {
            push("GPU models", format!("{family} {}", m.word), m.source);
        }
    }
}

/// Each released toolkit's verified target list ("12.8" → [50, 52, …]), as JSON keys.
pub fn verified_target_lists() -> std::collections::BTreeMap<String, Vec<u32>> {
    let mut out = std::collections::BTreeMap::new();
    for t in VERIFIED_TARGETS {
        for tk in all_released() {
            if tk >= t.from && tk <= t.to {
                out.insert(tk.to_string(), t.sms.to_vec());
            }
        }
    }
    out
}

fn released(tk: CudaVersion) -> bool {
    RELEASED_TOOLKITS
        .iter()
        .any(|(major, minors)| *major == tk.major && minors.contains(&tk.minor))
}

fn newest_released() -> Option<CudaVersion> {
    let (major, minors) = RELEASED_TOOLKITS.last()?;
    Some(v(*major, *minors.last()?))
}

fn all_released() -> Vec<CudaVersion> {
    RELEASED_TOOLKITS
        .iter()
        .flat_map(|(major, minors)| minors.iter().map(|m| v(*major, *m)))
        .collect()
}

const DERIVED_SOURCE: &str =
    "derived from the first/last CUDA columns of ARCHITECTURES in src/compat/arch.rs \
     (no toolkit binary inspected)";

/// The CCs whose first..=last CUDA range contains `tk`.
fn derived_targets(tk: CudaVersion) -> Vec<ComputeCapability> {
    ARCHITECTURES
        .iter()
        .filter(|r| r.first_cuda.is_some_and(|f| f <= tk) && r.last_cuda.is_none_or(|l| tk <= l))
        .map(|r| r.cc)
        .collect()
}

/// The `sm_XY` targets of toolkit `tk`'s nvcc: verified lists for 11.7+,
/// derived from the architecture table for 9.0–11.6. A 13.x newer than the
/// newest known release gets that release's list with `assumed_from` set.
pub fn compiler_targets(tk: CudaVersion) -> Option<CompilerTargets> {
    let newest = newest_released()?;
    let (from, assumed_from) = if released(tk) {
        (tk, None)
    } else if tk.major == newest.major && tk > newest {
        (newest, Some(newest))
    } else {
        return None;
    };
    let (mut targets, source) = match VERIFIED_TARGETS
        .iter()
        .find(|l| l.from <= from && from <= l.to)
    {
        Some(l) => (l.targets(), l.source),
        None => (derived_targets(from), DERIVED_SOURCE),
    };
    targets.sort();
    Some(CompilerTargets {
        toolkit: tk,
        targets,
        assumed_from,
        source,
    })
}

/// Market segment, as far as forward compatibility cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ProductClass {
    DataCenter,
    GeForce,
    Workstation,
    Jetson,
    Unknown,
}

impl ProductClass {
    /// Forward compatibility is for data-center GPUs and Jetson (which has its
    /// own upgrade matrix); GeForce and workstation cards fail with error 804.
    /// The few "NGC Server Ready" RTX SKUs that also support it are not told
    /// apart from other workstation cards.
    pub fn supports_forward_compat(self) -> Option<bool> {
        match self {
            ProductClass::DataCenter | ProductClass::Jetson => Some(true),
            ProductClass::GeForce | ProductClass::Workstation => Some(false),
            ProductClass::Unknown => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct GpuModel {
    pub cc: ComputeCapability,
    pub class: ProductClass,
    pub source: &'static str,
}

const GPUS: &str = "https://developer.nvidia.com/cuda-gpus";
const LEGACY: &str = "https://developer.nvidia.com/cuda-legacy-gpus";
const GPUS_OLD: &str =
    "developer.nvidia.com/cuda-gpus (older revision, as copied by third parties)";

/// A model word as it appears in the name, e.g. "A100" or "4090".
struct Model {
    word: &'static str,
    cc: ComputeCapability,
    source: &'static str,
}

// The model tables (DATA_CENTER, QUADRO, ..., GEFORCE_MX): src/compat/data/gpu_models.toml,
// compiled by build.rs.
include!(concat!(env!("OUT_DIR"), "/compat/gpu_models.rs"));

fn find(table: &'static [Model], word: &str) -> Option<&'static Model> {
    table.iter().find(|m| m.word == word)
}

fn model(m: &'static Model, class: ProductClass) -> GpuModel {
    GpuModel {
        cc: m.cc,
        class,
        source: m.source,
    }
}

fn fixed(major: u32, minor: u32, class: ProductClass, source: &'static str) -> GpuModel {
    GpuModel {
        cc: cc(major, minor),
        class,
        source,
    }
}

/// Compute capability and product class from a GPU name as the driver
/// reports it ("NVIDIA GeForce RTX 4090", "Tesla V100-SXM2-32GB"). It reads
/// whole words and settles the brand first (Jetson, RTX PRO, TITAN, Quadro,
/// GeForce, RTX), so "RTX A2000" is not the data-center A2 and "RTX 6000 Ada"
/// is not the Quadro RTX 6000. Names it does not know exactly give None.
pub fn gpu_from_name(name: &str) -> Option<GpuModel> {
    use ProductClass::*;
    let upper = name.to_ascii_uppercase();
    let words: Vec<&str> = upper
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty() && *w != "NVIDIA")
        .collect();
    let has = |w: &str| words.contains(&w);
    let after = |w: &str| {
        let i = words.iter().position(|x| *x == w)?;
        words.get(i + 1).copied()
    };

    // Jetson/Tegra first: "Jetson Orin Nano" is Orin, not the Maxwell Nano.
    if ["JETSON", "TEGRA", "ORIN", "XAVIER", "THOR"]
        .iter()
        .any(|w| has(w))
    {
        let r = if has("ORIN") {
            fixed(8, 7, Jetson, GPUS)
        } else if has("XAVIER") {
            fixed(7, 2, Jetson, LEGACY)
        } else if has("THOR") || (has("JETSON") && (has("T5000") || has("T4000"))) {
            // Reports 11.0 from CUDA 13.0 on (10.1 before).
            fixed(11, 0, Jetson, GPUS)
        } else if has("TX2") || (has("TEGRA") && after("TEGRA") == Some("X2")) {
            fixed(6, 2, Jetson, LEGACY)
        } else if has("TX1") || has("NANO") || (has("TEGRA") && after("TEGRA") == Some("X1")) {
            fixed(5, 3, Jetson, LEGACY)
        } else if has("TEGRA") && after("TEGRA") == Some("K1") {
            fixed(
                3,
                2,
                Jetson,
                "NVIDIA CUDA Toolkit, Driver and Architecture Matrix",
            )
        } else {
            return None;
        };
        return Some(r);
    }
    if has("GB10") {
        // Listed in the data-center column of NVIDIA's CC page.
        return Some(fixed(12, 1, DataCenter, GPUS));
    }
    if has("RTX") && has("PRO") {
        if !has("BLACKWELL") {
            return None;
        }
        let class = if has("SERVER") {
            DataCenter
        } else {
            Workstation
        };
        return Some(fixed(12, 0, class, GPUS));
    }
    if has("TITAN") {
        let gtx = has("GTX");
        let r = match after("TITAN") {
            Some("RTX") => fixed(7, 5, GeForce, GPUS_OLD),
            Some("V") => fixed(7, 0, GeForce, LEGACY),
            Some("XP") => fixed(6, 1, GeForce, LEGACY),
            // Maxwell "GeForce GTX TITAN X" vs Pascal "NVIDIA TITAN X (Pascal)".
            Some("X") if gtx => fixed(5, 2, GeForce, LEGACY),
            Some("X") => fixed(6, 1, GeForce, LEGACY),
            Some("Z" | "BLACK") | None if gtx => fixed(3, 5, GeForce, GPUS_OLD),
            _ => return None,
        };
        return Some(r);
    }
    if has("QUADRO") {
        if has("RTX") {
            return find(QUADRO_RTX, after("RTX")?).map(|m| model(m, Workstation));
        }
        return words
            .iter()
            .find_map(|w| find(QUADRO, w).or_else(|| find(T_SERIES, w)))
            .map(|m| model(m, Workstation));
    }
    if has("GEFORCE") {
        return geforce(&words);
    }
    if has("RTX") {
        if has("ADA") {
            return Some(fixed(8, 9, Workstation, GPUS));
        }
        return find(RTX_A, after("RTX")?).map(|m| model(m, Workstation));
    }
    if let Some(m) = words.iter().find_map(|w| find(T_SERIES, w)) {
        return Some(model(m, Workstation));
    }
    words
        .iter()
        .find_map(|w| find(DATA_CENTER, w))
        .map(|m| model(m, DataCenter))
}

fn geforce(words: &[&str]) -> Option<GpuModel> {
    let after = |w: &str| {
        let i = words.iter().position(|x| *x == w)?;
        Some((words.get(i + 1).copied()?, words.get(i + 2).copied()))
    };
    if let Some(m) = words.iter().find_map(|w| find(GEFORCE_MX, w)) {
        return Some(model(m, ProductClass::GeForce));
    }
    let (table, (number, suffix)) = if let Some(a) = after("RTX") {
        (GEFORCE_RTX, a)
    } else if let Some(a) = after("GTX") {
        (GEFORCE_GTX, a)
    } else if let Some(a) = after("GT") {
        (GEFORCE_GT, a)
    } else {
        return None;
    };
    // A lone letter after the number marks a different die: "RTX 3050 A" is
    // an Ada part. "D" (4090 D, 5090 D) is the same die.
    if suffix.is_some_and(|s| s.len() == 1 && s != "D") {
        return None;
    }
    find(table, number).map(|m| model(m, ProductClass::GeForce))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ProductClass::*;

    #[test]
    fn architecture_table_is_complete_and_sorted() {
        let ccs: Vec<String> = ARCHITECTURES.iter().map(|r| r.cc.to_string()).collect();
        assert_eq!(
            ccs.join(" "),
            "3.0 3.2 3.5 3.7 5.0 5.2 5.3 6.0 6.1 6.2 7.0 7.2 7.5 8.0 8.6 8.7 8.8 8.9 9.0 10.0 \
             10.1 10.3 10.7 11.0 12.0 12.1"
        );
        for r in ARCHITECTURES {
            if let (Some(f), Some(l)) = (r.first_cuda, r.last_cuda) {
                assert!(f <= l, "{}", r.cc);
            }
            assert!(!r.source.is_empty());
        }
        assert_eq!(arch_row(cc(8, 9)).unwrap().arch, "Ada Lovelace");
        assert!(arch_row(cc(8, 7)).unwrap().tegra);
        assert_eq!(arch_row(cc(6, 1)).unwrap().last_driver_branch, Some(580));
        assert_eq!(
            arch_row(cc(12, 0)).unwrap().kernel_modules,
            KernelModules::OpenOnly
        );
        assert!(arch_row(cc(2, 1)).is_none());
    }

    #[test]
    fn verified_lists_match_the_table() {
        // The first/last columns reproduce every binary-verified list, which is
        // what makes the derived pre-11.7 lists trustworthy.
        for l in VERIFIED_TARGETS {
            let range = all_released()
                .into_iter()
                .filter(|t| l.from <= *t && *t <= l.to);
            for tk in range {
                assert_eq!(derived_targets(tk), l.targets(), "CUDA {tk}");
            }
        }
    }

    #[test]
    fn compiler_target_lists() {
        let t = |a, b| compiler_targets(v(a, b)).unwrap();
        let t115 = t(11, 5);
        assert!(t115.supports(cc(8, 6)));
        assert!(t115.supports(cc(8, 7)));
        assert!(!t115.supports(cc(8, 9)));
        assert_eq!(t115.source, DERIVED_SOURCE);
        assert_eq!(t115.min(), cc(3, 5));
        let t130 = t(13, 0);
        assert!(!t130.supports(cc(6, 1)));
        assert!(t130.supports(cc(11, 0)));
        assert!(!t130.supports(cc(10, 1)));
        assert_eq!(t130.min(), cc(7, 5));
        assert_eq!(t130.max(), cc(12, 1));
        assert!(t(12, 8).supports(cc(12, 0)));
        assert!(!t(12, 6).supports(cc(12, 0)));
        assert!(!t(12, 0).supports(cc(3, 7)));
        assert!(t(11, 8).supports(cc(3, 7)));
        assert!(t(10, 2).supports(cc(3, 0)));
        assert!(t(10, 0).supports(cc(7, 5)));
        assert!(!t(9, 2).supports(cc(7, 5)));
        assert!(t(9, 1).supports(cc(7, 2)));
        assert!(!t(9, 0).supports(cc(7, 2)));
        assert!(!t(11, 0).supports(cc(3, 0)));
        assert!(t(11, 0).supports(cc(8, 0)));
        assert!(!t(11, 0).supports(cc(8, 6)));
        assert!(t(11, 1).supports(cc(8, 6)));
        assert!(t(13, 4).supports(cc(10, 7)));
        assert!(!t(13, 3).supports(cc(10, 7)));
        assert!(t(13, 5).assumed_from.is_none());
        assert_eq!(all_released().len(), 30);
        for tk in all_released() {
            let l = t(tk.major, tk.minor);
            assert!(!l.targets.is_empty());
            assert!(l.targets.windows(2).all(|w| w[0] < w[1]));
        }
    }

    #[test]
    fn compiler_targets_outside_the_table() {
        let newer = compiler_targets(v(13, 7)).unwrap();
        assert_eq!(newer.assumed_from, Some(v(13, 5)));
        assert_eq!(newer.toolkit, v(13, 7));
        assert_eq!(newer.targets, compiler_targets(v(13, 5)).unwrap().targets);
        assert!(compiler_targets(v(14, 0)).is_none());
        assert!(compiler_targets(v(12, 7)).is_none());
        assert!(compiler_targets(v(8, 0)).is_none());
        assert!(compiler_targets(v(9, 3)).is_none());
        assert!(compiler_targets(v(11, 9)).is_none());
    }

    #[test]
    fn sass_and_ptx_rules() {
        assert!(sass_runs_on(cc(8, 0), cc(8, 6)));
        assert!(sass_runs_on(cc(8, 6), cc(8, 9)));
        assert!(!sass_runs_on(cc(8, 6), cc(8, 0)));
        assert!(!sass_runs_on(cc(8, 0), cc(9, 0)));
        assert!(!sass_runs_on(cc(9, 0), cc(10, 0)));
        assert!(sass_runs_on(cc(10, 0), cc(10, 3)));
        assert!(sass_runs_on(cc(12, 0), cc(12, 1)));
        // Tegra: no binary compatibility across minors.
        assert!(!sass_runs_on(cc(8, 0), cc(8, 7)));
        assert!(!sass_runs_on(cc(7, 0), cc(7, 2)));
        assert!(!sass_runs_on(cc(5, 0), cc(5, 3)));
        assert!(!sass_runs_on(cc(10, 0), cc(10, 1)));
        assert!(!sass_runs_on(cc(7, 2), cc(7, 5)));
        assert!(sass_runs_on(cc(8, 7), cc(8, 7)));
        assert!(ptx_runs_on(cc(8, 0), cc(9, 0)));
        assert!(ptx_runs_on(cc(8, 0), cc(8, 7)));
        assert!(ptx_runs_on(cc(7, 5), cc(12, 0)));
        assert!(!ptx_runs_on(cc(9, 0), cc(8, 9)));
        assert!(!sass_variant_runs_on(
            cc(9, 0),
            ArchVariant::ArchSpecific,
            cc(10, 0)
        ));
        assert!(sass_variant_runs_on(
            cc(9, 0),
            ArchVariant::ArchSpecific,
            cc(9, 0)
        ));
        assert!(!sass_variant_runs_on(
            cc(10, 0),
            ArchVariant::ArchSpecific,
            cc(10, 3)
        ));
        assert!(sass_variant_runs_on(
            cc(10, 0),
            ArchVariant::FamilySpecific,
            cc(10, 3)
        ));
        assert!(!sass_variant_runs_on(
            cc(10, 0),
            ArchVariant::FamilySpecific,
            cc(12, 0)
        ));
    }

    fn g(name: &str) -> Option<(String, ProductClass)> {
        gpu_from_name(name).map(|m| (m.cc.to_string(), m.class))
    }

    fn is(name: &str, want: &str, class: ProductClass) {
        assert_eq!(g(name), Some((want.to_string(), class)), "{name}");
    }

    #[test]
    fn common_product_names_map_to_their_architecture() {
        is("NVIDIA GeForce RTX 4090", "8.9", GeForce);
        is("Tesla V100-SXM2-32GB", "7.0", DataCenter);
        is("NVIDIA H100 80GB HBM3", "9.0", DataCenter);
        is("NVIDIA A100-SXM4-40GB", "8.0", DataCenter);
        is("NVIDIA GeForce GTX 1050", "6.1", GeForce);
        is("Quadro RTX 6000", "7.5", Workstation);
        is("NVIDIA RTX A6000", "8.6", Workstation);
        is("NVIDIA RTX 6000 Ada Generation", "8.9", Workstation);
        is("NVIDIA L4", "8.9", DataCenter);
        is("NVIDIA L40S", "8.9", DataCenter);
        is("NVIDIA H200", "9.0", DataCenter);
        is("NVIDIA B200", "10.0", DataCenter);
        is("NVIDIA GeForce RTX 5090 D", "12.0", GeForce);
        is(
            "NVIDIA RTX PRO 6000 Blackwell Server Edition",
            "12.0",
            DataCenter,
        );
        is("Tesla T4", "7.5", DataCenter);
        is("Tesla K80", "3.7", DataCenter);
        is("NVIDIA GB10", "12.1", DataCenter);
        is("NVIDIA GeForce RTX 3050 Laptop GPU", "8.6", GeForce);
        is("NVIDIA A10G", "8.6", DataCenter);
        is("NVIDIA GeForce GTX 1650", "7.5", GeForce);
        is("NVIDIA TITAN RTX", "7.5", GeForce);
        is("NVIDIA GeForce MX450", "7.5", GeForce);
    }

    #[test]
    fn more_names() {
        is(
            "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
            "12.0",
            Workstation,
        );
        is(
            "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition",
            "12.0",
            Workstation,
        );
        is(
            "NVIDIA RTX PRO 4000 Blackwell SFF Edition",
            "12.0",
            Workstation,
        );
        is("NVIDIA RTX 4000 SFF Ada Generation", "8.9", Workstation);
        is("NVIDIA RTX A2000 8GB Laptop GPU", "8.6", Workstation);
        is("Quadro RTX 8000", "7.5", Workstation);
        is("Quadro P4000", "6.1", Workstation);
        is("Quadro GV100", "7.0", Workstation);
        is("Quadro GP100", "6.0", Workstation);
        is("Quadro M6000 24GB", "5.2", Workstation);
        is("Quadro K2200", "5.0", Workstation);
        is("Quadro T1000", "7.5", Workstation);
        is("NVIDIA T1000 8GB", "7.5", Workstation);
        is("NVIDIA T400 4GB", "7.5", Workstation);
        is("NVIDIA TITAN V", "7.0", GeForce);
        is("NVIDIA TITAN Xp", "6.1", GeForce);
        is("TITAN X (Pascal)", "6.1", GeForce);
        is("GeForce GTX TITAN X", "5.2", GeForce);
        is("GeForce GTX TITAN Black", "3.5", GeForce);
        is("GeForce GTX TITAN", "3.5", GeForce);
        is("NVIDIA GeForce RTX 4090 D", "8.9", GeForce);
        is("NVIDIA GeForce RTX 4070 Ti SUPER", "8.9", GeForce);
        is("NVIDIA GeForce RTX 2080 Ti", "7.5", GeForce);
        is("NVIDIA GeForce RTX 2050", "8.6", GeForce);
        is("NVIDIA GeForce RTX 5060 Laptop GPU", "12.0", GeForce);
        is("NVIDIA GeForce GTX 1660 SUPER", "7.5", GeForce);
        is("NVIDIA GeForce GTX 1080 Ti", "6.1", GeForce);
        is("GeForce GTX 980 Ti", "5.2", GeForce);
        is("GeForce GTX 750 Ti", "5.0", GeForce);
        is("GeForce GTX 780", "3.5", GeForce);
        is("GeForce GT 1030", "6.1", GeForce);
        is("NVIDIA GeForce MX570", "8.6", GeForce);
        is("NVIDIA GeForce MX150", "6.1", GeForce);
        is("NVIDIA H100 PCIe", "9.0", DataCenter);
        is("NVIDIA H100 NVL", "9.0", DataCenter);
        is("NVIDIA GH200 480GB", "9.0", DataCenter);
        is("NVIDIA B300 SXM6 AC", "10.3", DataCenter);
        is("NVIDIA A100 80GB PCIe", "8.0", DataCenter);
        is("NVIDIA A100-SXM4-40GB MIG 1g.5gb", "8.0", DataCenter);
        is("NVIDIA A2", "8.6", DataCenter);
        is("NVIDIA A30", "8.0", DataCenter);
        is("GRID T4-16Q", "7.5", DataCenter);
        is("Tesla V100S-PCIE-32GB", "7.0", DataCenter);
        is("Tesla P100-PCIE-16GB", "6.0", DataCenter);
        is("Tesla P4", "6.1", DataCenter);
        is("Tesla M60", "5.2", DataCenter);
        is("Tesla K40m", "3.5", DataCenter);
        is("Tesla K20Xm", "3.5", DataCenter);
        is("Tesla K10.G1.8GB", "3.0", DataCenter);
        is("Orin (nvgpu)", "8.7", Jetson);
        is("NVIDIA Jetson Orin Nano", "8.7", Jetson);
        is("Xavier", "7.2", Jetson);
        is("NVIDIA Tegra X1", "5.3", Jetson);
        is("NVIDIA Jetson Nano", "5.3", Jetson);
        is("NVIDIA Tegra X2", "6.2", Jetson);
        is("NVIDIA Thor", "11.0", Jetson);
        is("NVIDIA Jetson T5000", "11.0", Jetson);
        is("nvidia geforce rtx 4090", "8.9", GeForce);
    }

    #[test]
    fn unknown_or_vague_names() {
        for name in [
            "",
            "NVIDIA",
            "NVIDIA Graphics Device",
            "NVIDIA RTX 6000",
            "NVIDIA RTX PRO 6000",
            "NVIDIA TITAN",
            "NVIDIA GeForce RTX 3050 A Laptop GPU",
            "NVIDIA GeForce GT 730",
            "NVIDIA GeForce GTX 980M",
            "NVIDIA GeForce RTX 9090",
            "NVIDIA GeForce",
            "Quadro Something",
            "NVIDIA Jetson",
            "AMD Radeon RX 7900 XTX",
            "NVIDIA A1000000",
            "NVIDIA T4000",
            "GRID RTX6000-24Q",
            "😀 RTX 4090",
        ] {
            assert_eq!(g(name), None, "{name:?}");
        }
    }

    #[test]
    fn forward_compat_by_class() {
        assert_eq!(DataCenter.supports_forward_compat(), Some(true));
        assert_eq!(Jetson.supports_forward_compat(), Some(true));
        assert_eq!(GeForce.supports_forward_compat(), Some(false));
        assert_eq!(Workstation.supports_forward_compat(), Some(false));
        assert_eq!(Unknown.supports_forward_compat(), None);
    }
}
