//! A schema_version 1 report as `diff` reads it: the fields it compares, typed.
//!
//! Every field is optional, because gpudoctor 1.x adds fields without a version bump: one an
//! older report does not have reads as None, and the diff says it was not recorded. Where a
//! written `null` means something else (a probe that did not run, "none"), the field is a
//! [`Seen`], which keeps the two apart; elsewhere a `null` reads as not recorded. A value of
//! an unknown shape inside an NVML answer reads as no answer ([`Answer::Other`]), as a newer
//! 1.x may add answers; a value of another type anywhere else makes the file not a report.

use serde::de::{DeserializeOwned, IgnoredAny};
use serde::{Deserialize, Deserializer};
use serde_json::{Number, Value};

use crate::facts::environment::Environment;
use crate::facts::platform::Platform;

/// A field as written: None when the report lacks it, `Some(None)` when it is `null`.
pub type Seen<T> = Option<Option<T>>;

/// For `#[serde(default, deserialize_with = "seen")]`: a present field is Some, null included.
fn seen<'de, D, T>(d: D) -> Result<Seen<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// Reads a report whose `schema_version` is 1 (checked by the caller); an error names the
/// part that does not read (`"snapshot": invalid type: …`).
pub fn read(report: &Value) -> Result<Report, String> {
    fn part<T: DeserializeOwned>(report: &Value, key: &str) -> Result<Option<T>, String> {
        match report.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => T::deserialize(v)
                .map(Some)
                .map_err(|e| format!("\"{key}\": {e}")),
        }
    }
    Ok(Report {
        gpudoctor_version: part(report, "gpudoctor_version")?,
        snapshot: part(report, "snapshot")?.unwrap_or_default(),
        derived: part(report, "derived")?,
        findings: part(report, "findings")?,
    })
}

pub struct Report {
    pub gpudoctor_version: Option<String>,
    pub snapshot: Snapshot,
    pub derived: Option<Derived>,
    /// None when the report has none (read for its facts only).
    pub findings: Option<Vec<Finding>>,
}

/// Code and severity as text, so one that is missing or unknown is named by the caller.
#[derive(Deserialize)]
pub struct Finding {
    pub code: Option<String>,
    pub severity: Option<String>,
    pub title: Option<String>,
    pub detail: Option<String>,
    pub evidence: Option<Vec<Evidence>>,
    pub fix: Option<Vec<Fix>>,
    pub caused_by: Option<String>,
    pub cause_note: Option<String>,
}

#[derive(Deserialize)]
pub struct Evidence {
    pub fact: Option<String>,
    pub value: Option<String>,
    pub source: Option<String>,
}

#[derive(Deserialize)]
pub struct Fix {
    pub text: Option<String>,
    pub command: Option<String>,
}

#[derive(Deserialize)]
pub struct Derived {
    #[serde(default, deserialize_with = "seen")]
    pub driver: Seen<DerivedDriver>,
    #[serde(default, deserialize_with = "seen")]
    pub cuda_driver_version: Seen<String>,
    #[serde(default, deserialize_with = "seen")]
    pub gpu_count: Seen<DerivedCount>,
    #[serde(default, deserialize_with = "seen")]
    pub driver_gpu_count: Seen<DerivedCount>,
    #[serde(default, deserialize_with = "seen")]
    pub toolkit_in_use: Seen<DerivedToolkit>,
}

#[derive(Deserialize)]
pub struct DerivedDriver {
    pub version: Option<String>,
}

#[derive(Deserialize)]
pub struct DerivedCount {
    pub count: Option<u64>,
}

#[derive(Deserialize)]
pub struct DerivedToolkit {
    #[serde(default, deserialize_with = "seen")]
    pub root: Seen<String>,
    pub cuda: Option<String>,
}

#[derive(Default, Deserialize)]
pub struct Snapshot {
    #[serde(default, deserialize_with = "seen")]
    pub root: Seen<String>,
    pub node: Option<Node>,
    pub identity: Option<Identity>,
    pub platform: Option<Both<PlatformView, Platform>>,
    pub environment: Option<Both<EnvironmentView, Environment>>,
    pub kernel_module: Option<KernelModule>,
    pub pci: Option<Pci>,
    pub device_nodes: Option<DeviceNodes>,
    #[serde(default, deserialize_with = "seen")]
    pub nvml: Seen<Nvml>,
    pub toolkits: Option<Toolkits>,
    pub libraries: Option<Libraries>,
    pub python: Option<Vec<PythonEnv>>,
    pub python_live: Option<PythonLive>,
}

/// A section read as the diff's view and, where it reads as one, as the crate's own type
/// (which `Snapshot::place` takes): one that does not leaves the place unrecorded.
pub struct Both<V, T> {
    pub view: V,
    pub typed: Option<T>,
}

impl<'de, V: DeserializeOwned, T: DeserializeOwned> Deserialize<'de> for Both<V, T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        let typed = T::deserialize(&v).ok();
        let view = V::deserialize(v).map_err(serde::de::Error::custom)?;
        Ok(Both { view, typed })
    }
}

#[derive(Deserialize)]
pub struct Node {
    #[serde(default, deserialize_with = "seen")]
    pub hostname: Seen<String>,
    #[serde(default, deserialize_with = "seen")]
    pub machine_id: Seen<String>,
    pub name: Option<String>,
    pub time: Option<String>,
}

#[derive(Deserialize)]
pub struct Identity {
    pub uid: Option<u64>,
    pub user_name: Option<String>,
    #[serde(default, deserialize_with = "seen")]
    pub groups: Seen<Vec<u64>>,
}

/// A probed fact: `{"source", "value"}` or `{"source", "missing"}`.
#[derive(Deserialize)]
pub struct Fact<T> {
    pub value: Option<T>,
    pub missing: Option<Missing>,
}

#[derive(Deserialize)]
pub struct Missing {
    pub reason: Option<String>,
}

#[derive(Deserialize)]
pub struct PlatformView {
    #[serde(default, deserialize_with = "seen")]
    pub os: Seen<Fact<OsRelease>>,
    #[serde(default, deserialize_with = "seen")]
    pub kernel_release: Seen<Fact<String>>,
    #[serde(default, deserialize_with = "seen")]
    pub arch: Seen<Fact<String>>,
    #[serde(default, deserialize_with = "seen")]
    pub shm_kib: Seen<Fact<u64>>,
}

#[derive(Deserialize)]
pub struct OsRelease {
    pub pretty_name: Option<String>,
}

#[derive(Deserialize)]
pub struct EnvironmentView {
    pub variables: Option<Vec<Variable>>,
}

#[derive(Deserialize)]
pub struct Variable {
    pub name: Option<String>,
    #[serde(default, deserialize_with = "seen")]
    pub value: Seen<String>,
    pub category: Option<String>,
}

#[derive(Deserialize)]
pub struct KernelModule {
    #[serde(default, deserialize_with = "seen")]
    pub modules: Seen<Fact<Vec<LoadedModule>>>,
    #[serde(default, deserialize_with = "seen")]
    pub version_file: Seen<Fact<NvrmVersion>>,
    pub gpus: Option<Fact<Vec<DriverGpu>>>,
}

#[derive(Deserialize)]
pub struct LoadedModule {
    pub name: Option<String>,
}

#[derive(Deserialize)]
pub struct NvrmVersion {
    pub version: Option<String>,
    #[serde(default, deserialize_with = "seen")]
    pub flavor: Seen<String>,
}

#[derive(Deserialize)]
pub struct DriverGpu {
    pub uuid: Option<String>,
    pub bus_id: Option<String>,
    pub model: Option<String>,
    #[serde(default, deserialize_with = "seen")]
    pub video_bios: Seen<String>,
}

#[derive(Deserialize)]
pub struct Pci {
    pub devices: Option<Fact<Vec<PciDevice>>>,
}

#[derive(Deserialize)]
pub struct PciDevice {
    pub address: Option<String>,
    pub role: Option<String>,
    #[serde(default, deserialize_with = "seen")]
    pub driver: Seen<String>,
}

#[derive(Deserialize)]
pub struct DeviceNodes {
    pub nodes: Option<Vec<DeviceNode>>,
}

#[derive(Deserialize)]
pub struct DeviceNode {
    pub path: Option<String>,
    pub present: Option<bool>,
    pub mode: Option<String>,
    pub owner: Option<String>,
    pub group: Option<String>,
    pub access: Option<Access>,
}

#[derive(Deserialize)]
pub struct Access {
    pub read_write: Option<bool>,
}

#[derive(Deserialize)]
pub struct Nvml {
    pub result: Option<NvmlResult>,
}

/// The status's own fields, whichever status it is.
#[derive(Deserialize)]
pub struct NvmlResult {
    pub status: Option<String>,
    pub reason: Option<String>,
    pub code: Option<String>,
    pub seconds: Option<Number>,
    pub signal: Option<Number>,
    pub system: Option<NvmlSystem>,
    pub partial: Option<NvmlSystem>,
}

#[derive(Deserialize)]
pub struct NvmlSystem {
    pub devices: Option<Vec<NvmlGpu>>,
}

#[derive(Deserialize)]
pub struct NvmlGpu {
    pub index: Option<u64>,
    #[serde(default, deserialize_with = "seen")]
    pub handle_error: Seen<String>,
    pub name: Option<Answer<String>>,
    pub uuid: Option<Answer<String>>,
    pub pci_bus_id: Option<Answer<String>>,
    pub compute_capability: Option<Answer<String>>,
    pub memory: Option<Answer<Memory>>,
    pub pcie: Option<Pcie>,
    pub persistence_mode: Option<Answer<bool>>,
    pub compute_mode: Option<Answer<String>>,
    pub mig: Option<Mig>,
    pub ecc: Option<Ecc>,
    pub remapped_rows: Option<Answer<RemappedRows>>,
    pub retired_pages_pending: Option<Answer<bool>>,
    pub power_limit_mw: Option<Answer<u64>>,
    pub nvlinks: Option<Answer<Vec<bool>>>,
    pub fabric: Option<Answer<Fabric>>,
    pub recovery_action: Option<Answer<String>>,
}

/// One NVML answer: `{"value"}`, a word ("not_supported", "not_in_driver"), `{"error"}`.
pub enum Answer<T> {
    Value(T),
    Word(String),
    Error(String),
    /// Not a shape this build knows.
    Other,
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Answer<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum In<T> {
            Word(String),
            Value { value: T },
            Error { error: String },
            Other(IgnoredAny),
        }
        Ok(match In::deserialize(d)? {
            In::Word(w) => Answer::Word(w),
            In::Value { value } => Answer::Value(value),
            In::Error { error } => Answer::Error(error),
            In::Other(_) => Answer::Other,
        })
    }
}

#[derive(Deserialize)]
pub struct Memory {
    pub total: Option<u64>,
}

#[derive(Deserialize)]
pub struct Pcie {
    pub width: Option<Answer<u64>>,
    pub max_generation: Option<Answer<u64>>,
    pub max_width: Option<Answer<u64>>,
}

#[derive(Deserialize)]
pub struct Mig {
    pub enabled: Option<Answer<bool>>,
    pub instances: Option<Vec<IgnoredAny>>,
}

#[derive(Deserialize)]
pub struct Ecc {
    pub enabled: Option<Answer<bool>>,
    pub aggregate_uncorrected: Option<Answer<u64>>,
}

#[derive(Deserialize)]
pub struct RemappedRows {
    pub correctable: Option<u64>,
    pub uncorrectable: Option<u64>,
    pub pending: Option<bool>,
    pub failure: Option<bool>,
}

#[derive(Deserialize)]
pub struct Fabric {
    pub state: Option<String>,
    pub status: Option<String>,
}

#[derive(Deserialize)]
pub struct Toolkits {
    pub cuda_home: Option<CudaHome>,
    #[serde(default, deserialize_with = "seen")]
    pub nvcc_on_path: Seen<NvccOnPath>,
    #[serde(default, deserialize_with = "seen")]
    pub usr_local_cuda: Seen<String>,
    pub installs: Option<Vec<Toolkit>>,
    pub conda_packages: Option<Vec<NameVersion>>,
}

#[derive(Deserialize)]
pub struct CudaHome {
    #[serde(default, deserialize_with = "seen")]
    pub path: Seen<String>,
}

#[derive(Deserialize)]
pub struct NvccOnPath {
    pub path: Option<String>,
    pub resolved: Option<String>,
}

#[derive(Deserialize)]
pub struct Toolkit {
    pub root: Option<String>,
    #[serde(default, deserialize_with = "seen")]
    pub version: Seen<Fact<String>>,
}

/// A conda package or a Python distribution.
#[derive(Deserialize)]
pub struct NameVersion {
    pub name: Option<String>,
    #[serde(default, deserialize_with = "seen")]
    pub version: Seen<String>,
}

#[derive(Deserialize)]
pub struct Libraries {
    pub libraries: Option<Vec<Library>>,
}

#[derive(Deserialize)]
pub struct Library {
    pub soname: Option<String>,
    pub family: Option<String>,
    pub winner: Option<u64>,
    pub candidates: Option<Vec<Candidate>>,
}

#[derive(Deserialize)]
pub struct Candidate {
    pub path: Option<String>,
    pub target: Option<String>,
    pub version: Option<String>,
}

#[derive(Deserialize)]
pub struct PythonEnv {
    pub site: Option<String>,
    #[serde(default, deserialize_with = "seen")]
    pub python: Seen<String>,
    #[serde(default, deserialize_with = "seen")]
    pub torch: Seen<Torch>,
    pub nvidia_wheels: Option<Vec<NameVersion>>,
    pub companions: Option<Vec<NameVersion>>,
    pub frameworks: Option<Vec<NameVersion>>,
}

#[derive(Deserialize)]
pub struct Torch {
    #[serde(default, deserialize_with = "seen")]
    pub version: Seen<Fact<String>>,
    #[serde(default, deserialize_with = "seen")]
    pub dist_version: Seen<String>,
    #[serde(default, deserialize_with = "seen")]
    pub cuda: Seen<String>,
    #[serde(default, deserialize_with = "seen")]
    pub arches: Seen<Fact<Arches>>,
}

#[derive(Deserialize)]
pub struct Arches {
    #[serde(default, deserialize_with = "seen")]
    pub arch_list: Seen<Vec<String>>,
}

#[derive(Deserialize)]
pub struct PythonLive {
    pub result: Option<LiveResult>,
}

#[derive(Deserialize)]
pub struct LiveResult {
    pub status: Option<String>,
    pub answer: Option<LiveAnswer>,
}

#[derive(Deserialize)]
pub struct LiveAnswer {
    #[serde(default, deserialize_with = "seen")]
    pub is_available: Seen<bool>,
}
