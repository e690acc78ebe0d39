//! The JSON report is a contract. These types are declared independently of the
//! crate's and reject unknown fields: any change to a field fails here. Renaming or
//! removing one also needs a SCHEMA_VERSION bump; an added field only needs this file.

use crate::util;

use std::collections::BTreeMap;

use crate::util::*;
use serde::Deserialize;

const EXPECTED_SCHEMA_VERSION: u64 = 1;

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Derived {
    driver: Option<DerivedDriver>,
    cuda_driver_version: Option<String>,
    gpu_count: Option<DerivedCount>,
    driver_gpu_count: Option<DerivedCount>,
    toolkit_in_use: Option<DerivedToolkit>,
    known_gpus: Vec<DerivedGpu>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DerivedDriver {
    version: String,
    source: String,
    kernel: bool,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DerivedCount {
    count: usize,
    source: String,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DerivedToolkit {
    root: String,
    cuda: Option<String>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DerivedGpu {
    name: String,
    compute_capability: String,
    source: String,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Headline {
    kind: HeadlineKind,
    text: String,
    codes: Vec<String>,
}

#[derive(Deserialize, Debug, PartialEq)]
#[serde(rename_all = "snake_case")]
enum HeadlineKind {
    CudaWillNotWork,
    NotReady,
    NoGpu,
    NotProvenOnDevice,
    Ready,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Report {
    schema_version: u64,
    gpudoctor_version: String,
    #[allow(dead_code)]
    headline: Headline,
    snapshot: Snapshot,
    #[allow(dead_code)]
    derived: Derived,
    checks: Vec<Check>,
    findings: Vec<Finding>,
    summary: Summary,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Summary {
    errors: u64,
    warnings: u64,
    infos: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Check {
    rule: String,
    codes: Vec<String>,
    status: CheckStatus,
    detail: String,
}

#[derive(Deserialize, PartialEq, Debug)]
#[serde(rename_all = "snake_case")]
enum CheckStatus {
    Passed,
    Failed,
    NotApplicable,
    Skipped,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Finding {
    code: String,
    severity: Severity,
    title: String,
    detail: String,
    evidence: Vec<Evidence>,
    fix: Vec<Fix>,
    /// Present only on a consequence: the root cause's code and how it explains it.
    #[serde(default)]
    caused_by: Option<String>,
    #[serde(default)]
    cause_note: Option<String>,
}

#[derive(Deserialize, PartialEq, Debug)]
#[serde(rename_all = "lowercase")]
enum Severity {
    Error,
    Warning,
    Info,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Evidence {
    fact: Option<String>,
    value: String,
    source: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Fix {
    text: String,
    command: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Snapshot {
    root: Option<String>,
    image: Option<Image>,
    #[allow(dead_code)]
    node: Option<NodeIdentity>,
    probes: BTreeMap<String, ProbeRun>,
    identity: Option<Identity>,
    platform: Option<Platform>,
    kernel_module: Option<KernelModule>,
    kernel_log: Option<KernelLog>,
    pci: Option<Pci>,
    topology: Option<Topology>,
    device_nodes: Option<DeviceNodes>,
    container_host: Option<ContainerHost>,
    environment: Option<Environment>,
    #[allow(dead_code)]
    nccl: Option<NcclHost>,
    toolkits: Option<Toolkits>,
    libraries: Option<Libraries>,
    #[allow(dead_code)]
    linkage: Option<Vec<Linkage>>,
    #[allow(dead_code)]
    python_sites: Option<Vec<Site>>,
    nvml: Option<NvmlProbe>,
    #[allow(dead_code)]
    python: Option<Vec<PythonEnv>>,
    #[allow(dead_code)]
    python_live: Option<LiveTorch>,
    #[allow(dead_code)]
    smoke: Option<SmokeProbe>,
    #[allow(dead_code)]
    preflight: Option<Preflight>,
}

// `check --preflight`: the budget, its shares and the time taken.
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Preflight {
    budget_s: f64,
    probes_s: f64,
    smoke_s: f64,
    elapsed_s: f64,
}

// Who and where (src/probes/node.rs).
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeIdentity {
    name: String,
    hostname: Option<String>,
    machine_id: Option<String>,
    slurm: Option<SlurmContext>,
    kubernetes: Option<KubernetesContext>,
    time: String,
    gpudoctor_version: String,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SlurmContext {
    job_id: Option<String>,
    job_name: Option<String>,
    step_id: Option<String>,
    proc_id: Option<String>,
    node_name: Option<String>,
    cluster_name: Option<String>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KubernetesContext {
    node_name: Option<String>,
    pod_name: Option<String>,
    namespace: Option<String>,
    in_pod: bool,
}

// The smoke test's shape (src/probes/smoke.rs), declared independently.
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SmokeProbe {
    library: String,
    settings: SmokeSettings,
    result: SmokeResult,
    #[serde(default)]
    nccl: Option<NcclRequest>,
}

// What NCCL's variables can name here (src/probes/nccl.rs).
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NcclHost {
    net_interfaces: Fact<Vec<String>>,
    ib_devices: Fact<Vec<IbDevice>>,
    peermem_sysfs: Fact<Vec<String>>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IbDevice {
    name: String,
    ports: Vec<IbPort>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IbPort {
    number: u32,
    state: Option<String>,
    link_layer: Option<String>,
}

// The smoke test's --nccl step (src/smoke/nccl.rs).
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NcclRequest {
    library: String,
    chosen_by: String,
    refused: Option<String>,
    environment: Vec<String>,
    debug: Option<NcclDebug>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NcclDebug {
    version_line: Option<String>,
    transports: Vec<String>,
    settings: Vec<String>,
    warnings: Vec<String>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NcclRun {
    loaded_from: Option<String>,
    load_error: Option<NcclLoadError>,
    version: Option<i32>,
    ranks: Vec<u32>,
    stage: Option<String>,
    error: Option<NcclError>,
    skipped: Option<String>,
    all_reduce: Option<NcclAllReduce>,
    finished: bool,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NcclLoadError {
    code: String,
    message: String,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NcclError {
    call: String,
    code: i32,
    name: String,
    message: String,
    last_error: Option<String>,
    cuda: Option<CudaError>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NcclAllReduce {
    bytes: u64,
    ranks: u32,
    expected: f32,
    wrong_elements: u64,
    first_wrong: Option<(u32, u64, f32)>,
    iterations: u32,
    ms: f64,
    algbw_gbps: f64,
    busbw_gbps: f64,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SmokeSettings {
    matmul_size: u32,
    mem_fraction: f64,
    transfer_bytes: u64,
    device: Option<u32>,
    requested: bool,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(tag = "status", rename_all = "snake_case", deny_unknown_fields)]
enum SmokeResult {
    Ran {
        run: SmokeRun,
    },
    NotRun {
        reason: String,
    },
    LoadFailed {
        code: String,
        message: String,
    },
    TimedOut {
        seconds: f64,
        run: SmokeRun,
        stuck_at: Vec<String>,
        unkillable: bool,
    },
    Crashed {
        signal: i32,
        stderr: String,
        run: SmokeRun,
        during: Vec<String>,
    },
    WorkerFailed {
        detail: String,
    },
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CudaError {
    call: String,
    code: i32,
    name: String,
    message: String,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SmokeRun {
    loaded_from: Option<String>,
    init_done: bool,
    init_error: Option<CudaError>,
    driver_version: Option<i32>,
    device_count: Option<i32>,
    count_error: Option<CudaError>,
    cuda_visible_devices: Option<String>,
    stage: Option<String>,
    devices: Vec<SmokeDevice>,
    peers: Vec<SmokePeer>,
    #[serde(default)]
    nccl: Option<NcclRun>,
    finished: bool,
    elapsed_ms: f64,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SmokePeer {
    from: u32,
    to: u32,
    from_bus_id: Option<String>,
    to_bus_id: Option<String>,
    can_access: Option<SmokeStep<bool>>,
    enable: Option<SmokeStep<SmokeTiming>>,
    copy: Option<SmokeStep<SmokePeerBandwidth>>,
    running: Option<String>,
    finished: bool,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SmokePeerBandwidth {
    bytes: u64,
    iterations: u32,
    ms: f64,
    gbps: f64,
    mismatches: u64,
    verified: bool,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SmokeDevice {
    ordinal: u32,
    info: Option<SmokeInfo>,
    info_error: Option<CudaError>,
    context: Option<SmokeStep<SmokeTiming>>,
    module: Option<SmokeStep<SmokeTiming>>,
    matmul: Option<SmokeStep<SmokeMatmul>>,
    memory: Option<SmokeStep<SmokeMemory>>,
    transfer: Option<SmokeStep<SmokeTransfer>>,
    running: Option<String>,
    finished: bool,
    elapsed_ms: f64,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SmokeInfo {
    name: String,
    uuid: Option<String>,
    pci_bus_id: Option<String>,
    compute_capability: Option<String>,
    sm_count: Option<i32>,
    total_memory: Option<u64>,
    integrated: Option<bool>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum SmokeStep<T> {
    Ok(T),
    Failed {
        error: CudaError,
        detail: Option<String>,
    },
    Skipped {
        reason: String,
    },
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SmokeTiming {
    ms: f64,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SmokeMatmul {
    n: u32,
    ms: f64,
    gflops: f64,
    checked_rows: u32,
    wrong_elements: u64,
    max_abs_error: f64,
    max_error_ratio: f64,
    freivalds_passed: bool,
    correct: bool,
    tolerance: String,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SmokeMemory {
    total: u64,
    free_before: u64,
    fraction: f64,
    lowered_because: Option<String>,
    target: u64,
    chunk_bytes: u64,
    chunks: u32,
    allocated: u64,
    alloc_error: Option<CudaError>,
    failed_at: Option<u64>,
    fill_gbps: Option<f64>,
    verify_gbps: Option<f64>,
    mismatches: u64,
    kernel_error: Option<CudaError>,
    ms: f64,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SmokeTransfer {
    bytes: u64,
    host_memory_cap: bool,
    iterations: u32,
    pinned_h2d_gbps: Option<f64>,
    pinned_d2h_gbps: Option<f64>,
    pageable_h2d_gbps: Option<f64>,
    pageable_d2h_gbps: Option<f64>,
    pinned_error: Option<CudaError>,
    cpu_affinity: Option<String>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LiveTorch {
    python: String,
    result: LiveResult,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(tag = "status", rename_all = "snake_case", deny_unknown_fields)]
enum LiveResult {
    Ok { answer: LiveAnswer },
    NotProbed { reason: String },
    TimedOut { seconds: f64 },
    Failed { detail: String },
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LiveAnswer {
    python_version: Option<String>,
    torch: Option<String>,
    cuda: Option<String>,
    is_available: Option<bool>,
    device_count: Option<u32>,
    arch_flags: Option<String>,
    cudnn: Option<i64>,
    warnings: Vec<String>,
    import_error: Option<String>,
    loaded: Vec<String>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PythonEnv {
    site: String,
    found_by: String,
    python: Option<String>,
    primary: bool,
    torch: Option<Torch>,
    nvidia_wheels: Vec<NameVersion>,
    companions: Vec<NameVersion>,
    frameworks: Vec<NameVersion>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Torch {
    dist_version: String,
    version: Fact<String>,
    cuda: Option<String>,
    hip: Option<String>,
    git_version: Option<String>,
    debug: Option<bool>,
    requires: Vec<TorchRequirement>,
    requires_problems: Vec<MetadataProblem>,
    arches: Option<Fact<FatbinSummary>>,
    conda_build: Option<String>,
    conda_mutex: Option<String>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MetadataProblem {
    source: String,
    detail: String,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TorchRequirement {
    name: String,
    extras: Vec<String>,
    spec: String,
    via: Option<String>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FatbinSummary {
    containers: u32,
    counts: Vec<ArchCount>,
    arch_list: Vec<String>,
    extras: Vec<String>,
    bytes_read: u64,
    entries: u32,
    compressed_entries: u32,
    section_size: u64,
    majority_percent: u32,
    complete: bool,
    notes: Vec<String>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ArchCount {
    arch: String,
    entries: u32,
    containers: u32,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NvmlProbe {
    library: String,
    result: NvmlResult,
    counters_again: Option<CountersAgain>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CountersAgain {
    after: String,
    elapsed_ms: u64,
    gpus: Vec<GpuCounters>,
    error: Option<String>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GpuCounters {
    index: u32,
    pcie_replay_counter: NField<u32>,
    nvlink_errors: NField<Vec<Option<NvLinkErrors>>>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NvLinkErrors {
    replay: u64,
    recovery: u64,
    crc_flit: u64,
    crc_data: u64,
}

// Read for its shape: deserialising is the check.
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(tag = "status", rename_all = "snake_case", deny_unknown_fields)]
enum NvmlResult {
    Ok {
        system: NvmlSystem,
    },
    NotProbed {
        reason: String,
    },
    InitFailed {
        code: String,
        message: String,
    },
    TimedOut {
        seconds: f64,
        partial: Option<NvmlSystem>,
        stuck_at: Option<String>,
    },
    Crashed {
        signal: i32,
        stderr: String,
    },
    WorkerFailed {
        detail: String,
    },
}

/// An NVML answer: exactly one of these keys.
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum NField<T> {
    Value(T),
    NotSupported,
    NotInDriver,
    Error(String),
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NvmlSystem {
    driver_version: NField<String>,
    cuda_driver_version: NField<String>,
    nvml_version: NField<String>,
    device_count: NField<u32>,
    devices: Vec<NvmlGpu>,
    topology: Vec<NvmlPair>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NvmlPair {
    a: u32,
    b: u32,
    common_ancestor: NField<String>,
    p2p_read: NField<String>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NvmlGpu {
    index: u32,
    handle_error: Option<String>,
    name: NField<String>,
    uuid: NField<String>,
    serial: NField<String>,
    pci_bus_id: NField<String>,
    pci_device_id: NField<String>,
    minor_number: NField<u32>,
    architecture: NField<String>,
    compute_capability: NField<String>,
    memory: NField<NvmlMemory>,
    bar1: NField<NvmlBar1>,
    pcie: NvmlPcie,
    temperature_c: NField<u32>,
    temperature_slowdown_c: NField<u32>,
    temperature_shutdown_c: NField<u32>,
    power_usage_mw: NField<u32>,
    power_limit_mw: NField<u32>,
    clocks: NvmlClocks,
    throttle: NField<NvmlThrottle>,
    ecc: NvmlEcc,
    retired_pages: NField<NvmlRetired>,
    retired_pages_pending: NField<bool>,
    remapped_rows: NField<NvmlRemapped>,
    persistence_mode: NField<bool>,
    compute_mode: NField<String>,
    mig: NvmlMig,
    processes: NField<Vec<NvmlProcess>>,
    nvlinks: NField<Vec<bool>>,
    nvlink_remotes: NField<Vec<Option<String>>>,
    fabric: NField<NvmlFabric>,
    recovery_action: NField<String>,
    pcie_replay_counter: NField<u32>,
    nvlink_errors: NField<Vec<Option<NvLinkErrors>>>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NvmlMemory {
    total: u64,
    used: u64,
    free: u64,
    reserved: u64,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NvmlBar1 {
    total: u64,
    used: u64,
    free: u64,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NvmlPcie {
    generation: NField<u32>,
    max_generation: NField<u32>,
    width: NField<u32>,
    max_width: NField<u32>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NvmlClocks {
    sm_mhz: NField<u32>,
    memory_mhz: NField<u32>,
    max_sm_mhz: NField<u32>,
    max_memory_mhz: NField<u32>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NvmlThrottle {
    bits: u64,
    reasons: Vec<String>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NvmlEcc {
    enabled: NField<bool>,
    pending: NField<bool>,
    volatile_corrected: NField<u64>,
    volatile_uncorrected: NField<u64>,
    aggregate_corrected: NField<u64>,
    aggregate_uncorrected: NField<u64>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NvmlRetired {
    single_bit: u32,
    double_bit: u32,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NvmlRemapped {
    correctable: u32,
    uncorrectable: u32,
    pending: bool,
    failure: bool,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NvmlMig {
    enabled: NField<bool>,
    pending: NField<bool>,
    instances: Vec<NvmlMigInstance>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NvmlMigInstance {
    index: u32,
    uuid: NField<String>,
    memory_total: NField<u64>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NvmlProcess {
    pid: u32,
    kind: String,
    name: Option<String>,
    used_memory: Option<u64>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NvmlFabric {
    state: String,
    status: String,
}

// Read for its shape: deserialising is the check.
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Toolkits {
    installs: Vec<Toolkit>,
    rejected: Vec<Rejected>,
    nvcc_on_path: Option<NvccOnPath>,
    cuda_home: CudaHome,
    usr_local_cuda: Option<String>,
    conda_packages: Vec<NameVersion>,
    extension_builders: Vec<ExtensionPackage>,
}

// Read for its shape: deserialising is the check.
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Toolkit {
    root: String,
    kind: String,
    found: Vec<Found>,
    version: Fact<String>,
    cuda: Option<String>,
    disagreements: Vec<VersionReading>,
    nvcc: Option<String>,
    headers: bool,
    lib_dirs: Vec<String>,
}

// Read for its shape: deserialising is the check.
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Found {
    route: String,
    path: String,
}

// Read for its shape: deserialising is the check.
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VersionReading {
    source: String,
    version: String,
}

// Read for its shape: deserialising is the check.
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Rejected {
    route: String,
    path: String,
    reason: String,
}

// Read for its shape: deserialising is the check.
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NvccOnPath {
    path: String,
    resolved: String,
    toolkit: Option<usize>,
}

// Read for its shape: deserialising is the check.
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CudaHome {
    path: Option<String>,
    via: String,
    toolkit: Option<usize>,
}

// Read for its shape: deserialising is the check.
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NameVersion {
    name: String,
    version: String,
}

// Read for its shape: deserialising is the check.
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExtensionPackage {
    name: String,
    version: String,
    site: String,
}

// Read for its shape: deserialising is the check.
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Libraries {
    search: SearchPath,
    libraries: Vec<Library>,
    nvidia_smi: Option<Executable>,
}

// What the loader binds for each CUDA-using module (src/probes/linkage.rs, src/loader.rs).
// Read for its shape: deserialising is the check.
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Linkage {
    site: String,
    python: Option<String>,
    ld_library_path: Vec<String>,
    modules: Vec<LinkedModule>,
    objects: Vec<LinkedObject>,
    #[serde(default)]
    limits: Vec<String>,
    #[serde(default)]
    versions: Vec<LibraryVersion>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkedModule {
    package: String,
    dist: Option<String>,
    path: String,
    object: Option<usize>,
    mapped: Vec<usize>,
    failures: Vec<LoadFailed>,
    #[serde(default)]
    optional: Option<String>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LoadFailed {
    failure: LoadFailure,
    #[serde(default)]
    picked_how: Option<LoaderStep>,
    #[serde(default)]
    would_work: Vec<String>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
enum LoadFailure {
    Missing {
        needed: String,
        by: String,
    },
    VersionNotFound {
        version: String,
        library: String,
        by: String,
    },
    UndefinedSymbol {
        symbol: String,
        version: String,
        library: String,
        by: String,
    },
    Unloadable {
        path: String,
        reason: String,
    },
    Limit {
        detail: String,
    },
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(tag = "step", rename_all = "snake_case", deny_unknown_fields)]
enum LoaderStep {
    Path,
    AlreadyLoaded,
    Rpath { owner: String, entry: String },
    LdLibraryPath { index: usize, entry: String },
    Runpath { entry: String },
    LdSoCache,
    DefaultDir,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkedObject {
    path: String,
    target: String,
    soname: Option<String>,
    loader: Option<usize>,
    how: LoaderStep,
    deps: Vec<LinkedBinding>,
    live: bool,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkedBinding {
    needed: String,
    object: Option<usize>,
    how: Option<LoaderStep>,
    #[serde(default)]
    skipped: Vec<String>,
    #[serde(default)]
    searched: Vec<String>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LibraryVersion {
    object: usize,
    version: String,
    source: String,
}

// Read for its shape: deserialising is the check.
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Executable {
    path: String,
    resolved: String,
}

// Read for its shape: deserialising is the check.
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchPath {
    ld_library_path: Vec<String>,
    ld_library_path_resolved: Vec<Option<String>>,
    cache: Fact<CacheInfo>,
    default_dirs: Vec<String>,
    wsl_lib_searched: Option<bool>,
}

// Read for its shape: deserialising is the check.
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CacheInfo {
    format: String,
    entries: u64,
}

// Read for its shape: deserialising is the check.
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Library {
    family: String,
    soname: String,
    candidates: Vec<Candidate>,
    winner: Option<usize>,
    elsewhere: Vec<Candidate>,
}

// Read for its shape: deserialising is the check.
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Candidate {
    path: String,
    via: String,
    detail: Option<String>,
    target: Option<String>,
    version: Option<String>,
    version_source: Option<String>,
    elf_soname: Option<String>,
    needed: Vec<String>,
    size: Option<u64>,
    stub: bool,
    forward_compat: bool,
    problem: Option<String>,
}

// Read for its shape: deserialising is the check.
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Site {
    path: String,
    found_by: String,
    python: Option<String>,
    #[serde(default)]
    primary: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProbeRun {
    status: String,
    elapsed_us: u64,
    detail: Option<String>,
}

/// A fact: `source` plus exactly one of `value` / `missing`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Fact<T> {
    source: String,
    value: Option<T>,
    missing: Option<Missing>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Missing {
    reason: String,
    detail: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Identity {
    uid: u32,
    gid: u32,
    groups: Vec<u32>,
    user_name: Option<String>,
    source: String,
    is_process: bool,
    in_user_namespace: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Platform {
    os: Fact<OsRelease>,
    kernel_release: Fact<String>,
    arch: Fact<String>,
    container: Container,
    wsl: Wsl,
    #[allow(dead_code)]
    shm_kib: Option<Fact<u64>>,
    #[allow(dead_code)]
    virtual_machine: Vec<Hint>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OsRelease {
    id: Option<String>,
    version_id: Option<String>,
    pretty_name: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Hint {
    kind: String,
    source: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Container {
    kind: Option<String>,
    hints: Vec<Hint>,
    given: Option<ContainerGiven>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Image {
    path: String,
    format: String,
    reference: Option<String>,
    manifest_digest: Option<String>,
    config_digest: String,
    os: String,
    architecture: String,
    variant: Option<String>,
    platforms: Vec<String>,
    matches_host: bool,
    env: Vec<String>,
    user: Option<String>,
    working_dir: Option<String>,
    entrypoint: Vec<String>,
    cmd: Vec<String>,
    labels: BTreeMap<String, String>,
    layers: Vec<ImageLayer>,
    skipped: Vec<SkippedEntry>,
    skipped_more: u64,
    unpacked_bytes: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ImageLayer {
    digest: String,
    media_type: String,
    compressed_bytes: u64,
    unpacked_bytes: u64,
    entries: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct SkippedEntry {
    layer: String,
    path: String,
    reason: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ContainerGiven {
    nvidia_mounts: Fact<Vec<InjectedMount>>,
    device_cgroup: Fact<DeviceCgroup>,
    pod_namespace: Option<Fact<String>>,
    apptainer_nv_libs: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InjectedMount {
    path: String,
    source_path: String,
    fstype: String,
    kind: MountKind,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum MountKind {
    DriverLibrary,
    Program,
    DeviceNode,
    DriverProc,
    Firmware,
    Socket,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeviceCgroup {
    version: u8,
    rules: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Wsl {
    detected: bool,
    version: Option<u8>,
    hints: Vec<Hint>,
}

// What the driver and PCIe error reporting wrote to the kernel log (src/probes/kernel_log.rs).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KernelLog {
    scan: Fact<LogScan>,
    passed_over: Vec<String>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LogScan {
    span: String,
    records: u64,
    truncated: bool,
    groups: Vec<EventGroup>,
    events_not_grouped: u64,
    lines: Vec<LoggedLine>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EventGroup {
    kind: String,
    code: Option<u32>,
    device: Option<String>,
    detail: Option<String>,
    this_boot: Option<bool>,
    count: u64,
    last_record: u64,
    first: Option<String>,
    last: Option<String>,
    processes: Vec<String>,
    example: String,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LoggedLine {
    at: Option<String>,
    text: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KernelModule {
    version_file: Fact<NvrmVersion>,
    modules: Fact<Vec<LoadedModule>>,
    sys_version: Fact<String>,
    gpus: Fact<Vec<DriverGpu>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NvrmVersion {
    raw: String,
    version: String,
    flavor: String,
    arch: Option<String>,
    build_date: Option<String>,
    compiler: Option<String>,
    l4t: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LoadedModule {
    name: String,
    size: Option<u64>,
    refcount: Option<u64>,
    used_by: Vec<String>,
    state: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DriverGpu {
    bus_id: String,
    model: Option<String>,
    uuid: Option<String>,
    video_bios: Option<String>,
    device_minor: Option<u32>,
    source: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Pci {
    devices: Fact<Vec<PciDevice>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PciDevice {
    address: String,
    device_id: String,
    class: String,
    role: String,
    driver: Option<String>,
    subsystem: Option<String>,
    source: String,
}

// Where the GPUs sit on the PCI bus (src/probes/topology.rs).
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Topology {
    gpus: Fact<Vec<TopoGpu>>,
    bridges: Vec<TopoBridge>,
    iommu: Iommu,
    nics: Fact<Vec<Nic>>,
    aer: Vec<AerCounters>,
    aer_again: Option<AerReread>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AerCounters {
    address: String,
    correctable: Option<u64>,
    nonfatal: Option<u64>,
    fatal: Option<u64>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AerReread {
    after: String,
    elapsed_ms: u64,
    devices: Vec<AerCounters>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TopoGpu {
    address: String,
    host_bridge: Option<String>,
    path: Vec<String>,
    source: String,
    numa_node: Fact<i32>,
    local_cpulist: Fact<String>,
    iommu_group: Option<u32>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TopoBridge {
    address: String,
    id: Option<String>,
    kind: String,
    acs: Fact<Option<Acs>>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Acs {
    offset: u16,
    capability: u16,
    control: u16,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Iommu {
    units: Fact<Vec<IommuUnit>>,
    groups: Vec<IommuGroup>,
    cmdline: Fact<Vec<String>>,
    mode: String,
    mode_source: String,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IommuUnit {
    name: String,
    kind: String,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IommuGroup {
    number: u32,
    kind: Fact<String>,
    devices: Vec<String>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Nic {
    name: String,
    address: Option<String>,
    host_bridge: Option<String>,
    path: Vec<String>,
    numa_node: Option<i32>,
    link_layers: Vec<String>,
    netdevs: Vec<String>,
}

// The host's container stack (src/probes/container_host.rs).
#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ContainerHost {
    packages: Fact<Vec<HostPackage>>,
    rpm_db: Option<Fact<Vec<HostPackage>>>,
    docker: Docker,
    podman: Podman,
    containerd: Vec<Containerd>,
    crio: Crio,
    kubernetes: Vec<String>,
    toolkit: ContainerToolkit,
    cdi: Cdi,
    dev_char: DevChar,
    cgroup: Fact<String>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HostPackage {
    name: String,
    version: String,
    source: String,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HostBinary {
    name: String,
    path: String,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Docker {
    binaries: Vec<HostBinary>,
    packages: Vec<HostPackage>,
    snap: Option<DockerSnap>,
    daemon_configs: Vec<Fact<DaemonConfig>>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DockerSnap {
    evidence: Vec<String>,
    version: Fact<String>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DaemonConfig {
    runtimes: BTreeMap<String, Option<String>>,
    default_runtime: Option<String>,
    cdi: Option<bool>,
    cgroup_driver: Option<String>,
    cdi_spec_dirs: Vec<String>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Podman {
    binaries: Vec<HostBinary>,
    nvidia_hooks: Vec<String>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Containerd {
    flavor: String,
    binaries: Vec<HostBinary>,
    config: Fact<ContainerdConfig>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ContainerdConfig {
    version: Option<i64>,
    runtimes: BTreeMap<String, Option<String>>,
    default_runtime_name: Option<String>,
    systemd_cgroup: Option<bool>,
    enable_cdi: Option<bool>,
    cdi_spec_dirs: Vec<String>,
    imports: Vec<String>,
    import_errors: Vec<String>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Crio {
    binaries: Vec<HostBinary>,
    configs: Vec<Fact<CrioConfig>>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CrioConfig {
    runtimes: BTreeMap<String, Option<String>>,
    default_runtime: Option<String>,
    cgroup_manager: Option<String>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ContainerToolkit {
    binaries: Vec<HostBinary>,
    config: Fact<ToolkitConfig>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolkitConfig {
    mode: Option<String>,
    no_cgroups: Option<bool>,
    ldconfig: Option<String>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Cdi {
    dirs: Vec<String>,
    specs: Vec<Fact<CdiSpec>>,
    notes: Vec<String>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CdiSpec {
    cdi_version: Option<String>,
    kind: Option<String>,
    device_count: usize,
    devices: Vec<String>,
    hooks: Vec<String>,
    driver_version: Option<String>,
    host_paths: Vec<HostPath>,
    notes: Vec<String>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HostPath {
    path: String,
    kind: String,
    exists: bool,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DevChar {
    listing: Fact<usize>,
    nodes: Vec<CharNode>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CharNode {
    path: String,
    major_minor: Option<String>,
    link: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeviceNodes {
    nodes: Vec<DeviceNode>,
    listing_error: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeviceNode {
    path: String,
    present: bool,
    kind: Option<String>,
    mode: Option<String>,
    uid: Option<u32>,
    gid: Option<u32>,
    owner: Option<String>,
    group: Option<String>,
    major: Option<u32>,
    minor: Option<u32>,
    access: Option<Access>,
    error: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Access {
    read_write: bool,
    method: String,
    detail: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Environment {
    variables: Vec<EnvValue>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EnvValue {
    name: String,
    value: String,
    category: String,
    redacted: bool,
    lossy: bool,
}

fn parse(stdout: &str) -> Report {
    serde_json::from_str(stdout)
        .unwrap_or_else(|e| panic!("the JSON report no longer matches the contract: {e}\n{stdout}"))
}

#[test]
fn every_field_of_a_rich_report_matches_the_contract() {
    let root = FakeRoot::healthy(2);
    root.chmod("dev/nvidia1", 0o600).file(
        "proc/driver/nvidia/gpus/0000:18:00.0/information",
        "Model: \t\t NVIDIA H100\nDevice Minor: \t 0\n",
    );
    root.gpu("0000:c1:00.0", Some("vfio-pci")).pci(
        "0000:18:00.1",
        "22a3",
        "040300",
        Some("snd_hda_intel"),
    );
    // A torch whose CUDA runtime is missing and a cuDNN found: the linkage probe's
    // bindings, failures and versions are in the report.
    let site = root.torch_venv(
        "2.9.0+cu130",
        Some("13.0"),
        &["nvidia-cudnn-cu13==9.13.0.50"],
    );
    root.lib(
        &format!("{site}/torch/lib"),
        "libtorch_global_deps.so",
        "libtorch_global_deps.so",
        &["libcublas.so.13", "libcudnn.so.9"],
    )
    .lib(
        "usr/lib/x86_64-linux-gnu",
        "libcudnn.so.9.1.0",
        "libcudnn.so.9",
        &[],
    );
    let r = run(root
        .cmd()
        .args(["check", "--json", "--user", ALICE])
        .env("VIRTUAL_ENV", "/venv")
        .env("CUDA_LAUNCH_BLOCKING", "1")
        .env("NCCL_SOCKET_TOKEN", "x"));
    let report = parse(&r.stdout);
    let linkage = report.snapshot.linkage.as_ref().expect("linkage");
    assert_eq!(linkage[0].modules[0].failures.len(), 1, "{}", r.stdout);
    assert!(!linkage[0].versions.is_empty(), "{}", r.stdout);
    assert_eq!(
        report.schema_version, EXPECTED_SCHEMA_VERSION,
        "schema_version changed: update this test's types too"
    );
    assert_eq!(
        report.schema_version,
        gpudoctor::report::SCHEMA_VERSION as u64
    );
    assert_eq!(report.gpudoctor_version, env!("CARGO_PKG_VERSION"));
    assert_eq!(
        report.summary.errors as usize,
        report
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count()
    );
    assert_eq!(
        report.summary.warnings as usize,
        report
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Warning)
            .count()
    );
    assert_eq!(report.summary.infos, 0);
    assert_eq!(r.code, 1);

    let s = &report.snapshot;
    assert!(s.root.is_some());
    assert_eq!(s.probes.len(), 17);
    // The kernel log: read, or why not, naming every source tried.
    let klog = s.kernel_log.as_ref().expect("kernel_log");
    match (&klog.scan.value, &klog.scan.missing) {
        (Some(scan), None) => assert!(scan.records > 0 || scan.groups.is_empty()),
        (None, Some(m)) => {
            assert!(m.detail.contains("/dev/kmsg"), "{}", m.detail);
            assert!(klog
                .passed_over
                .iter()
                .any(|p| p.starts_with("/var/log/kern.log")));
        }
        _ => panic!("a fact is a value or a reason"),
    }
    let topo = s.topology.as_ref().expect("topology");
    assert!(topo.gpus.value.as_ref().is_some_and(|g| !g.is_empty()));
    let host = s.container_host.as_ref().expect("container_host");
    assert_eq!(host.cdi.dirs, ["/etc/cdi", "/var/run/cdi"]);
    // Under --root without --cuda-lib the smoke test is recorded as not run, with why.
    let smoke = s.smoke.as_ref().expect("smoke");
    assert_eq!(smoke.library, "libcuda.so.1");
    assert!(matches!(&smoke.result, SmokeResult::NotRun { reason } if reason.contains("--root")));
    let nvml = s.nvml.as_ref().expect("nvml");
    assert_eq!(nvml.library, "libnvidia-ml.so.1");
    assert!(matches!(nvml.result, NvmlResult::NotProbed { .. }));
    let tk = s.toolkits.as_ref().expect("toolkits");
    assert_eq!(tk.installs.len(), 1);
    assert_eq!(tk.installs[0].cuda.as_deref(), Some("13.0"));
    assert!(tk.installs[0].version.value.is_some() && tk.installs[0].version.missing.is_none());
    assert_eq!(tk.cuda_home.toolkit, Some(0));
    let libs = s.libraries.as_ref().expect("libraries");
    assert_eq!(libs.search.cache.value.as_ref().map(|c| c.entries), Some(3));
    let cuda = libs
        .libraries
        .iter()
        .find(|l| l.soname == "libcuda.so.1")
        .expect("libcuda");
    let winner = &cuda.candidates[cuda.winner.expect("winner")];
    assert_eq!(winner.version.as_deref(), Some("580.95.05"));
    assert_eq!(winner.via, "ld_so_cache");
    assert!(s
        .probes
        .iter()
        .filter(|(name, _)| *name != "pytorch_live" && *name != "smoke")
        .all(|(_, p)| p.status == "ok" && p.detail.is_none() && p.elapsed_us < 5_000_000));
    assert_eq!(s.probes["smoke"].status, "skipped");
    assert_eq!(s.probes["pytorch_live"].status, "skipped");
    let id = s.identity.as_ref().unwrap();
    assert_eq!(
        (id.uid, id.gid, id.user_name.as_deref(), id.is_process),
        (4242, 4242, Some("alice"), false)
    );
    assert!(id.groups.contains(&4242) && !id.source.is_empty() && id.in_user_namespace.is_none());

    let p = s.platform.as_ref().unwrap();
    assert_eq!(p.os.value.as_ref().unwrap().id.as_deref(), Some("ubuntu"));
    assert_eq!(
        p.os.value.as_ref().unwrap().version_id.as_deref(),
        Some("22.04")
    );
    assert_eq!(
        p.os.value.as_ref().unwrap().pretty_name,
        "Ubuntu 22.04.4 LTS"
    );
    assert_eq!(p.kernel_release.value.as_deref(), Some("6.8.0-45-generic"));
    assert_eq!(p.arch.source, "/proc/sys/kernel/arch");
    assert!(p.container.kind.is_none() && p.container.hints.is_empty());
    assert!(
        !p.wsl.detected
            && p.wsl.version.is_none()
            && p.wsl.hints.iter().all(|h| !h.kind.is_empty())
    );

    let km = s.kernel_module.as_ref().unwrap();
    let v = km.version_file.value.as_ref().unwrap();
    assert_eq!(
        (
            v.version.as_str(),
            v.flavor.as_str(),
            v.arch.as_deref(),
            v.l4t
        ),
        ("580.95.05", "open", Some("x86_64"), false)
    );
    assert!(v.raw.starts_with("NVRM version:") && v.build_date.is_some() && v.compiler.is_some());
    let mods = km.modules.value.as_ref().unwrap();
    assert!(mods.iter().any(|m| m.name == "nvidia_uvm"
        && m.size == Some(1000)
        && m.refcount == Some(0)
        && m.used_by.is_empty()
        && m.state.as_deref() == Some("Live")));
    assert_eq!(km.sys_version.value.as_deref(), Some("580.95.05"));
    let gpus = km.gpus.value.as_ref().unwrap();
    assert_eq!(gpus.len(), 2);
    assert!(gpus.iter().all(|g| g.model.is_some()
        && g.device_minor.is_some()
        && !g.source.is_empty()
        && !g.bus_id.is_empty()));
    assert!(gpus[1].uuid.is_some() && gpus[1].video_bios.is_some());

    let devices = s.pci.as_ref().unwrap().devices.value.as_ref().unwrap();
    assert_eq!(devices.len(), 4);
    let audio = devices
        .iter()
        .find(|d| d.address == "0000:18:00.1")
        .unwrap();
    assert_eq!(
        (
            audio.role.as_str(),
            audio.class.as_str(),
            audio.device_id.as_str()
        ),
        ("audio", "040300", "10de:22a3")
    );
    assert!(devices
        .iter()
        .all(|d| d.subsystem.as_deref() == Some("10de:1234") && !d.source.is_empty()));
    assert!(devices
        .iter()
        .any(|d| d.driver.as_deref() == Some("vfio-pci")));

    let nodes = s.device_nodes.as_ref().unwrap();
    assert!(nodes.listing_error.is_none());
    let n1 = nodes
        .nodes
        .iter()
        .find(|n| n.path == "/dev/nvidia1")
        .unwrap();
    assert!(
        n1.present
            && n1.kind.as_deref() == Some("regular_file")
            && n1.mode.as_deref() == Some("0600")
    );
    assert!(
        n1.uid.is_some()
            && n1.gid.is_some()
            && n1.owner.as_deref() == Some("root")
            && n1.group.as_deref() == Some("video")
    );
    assert!(n1.major.is_none() && n1.minor.is_none() && n1.error.is_none());
    let a = n1.access.as_ref().unwrap();
    assert!(!a.read_write && a.method == "mode bits" && a.detail.contains("alice"));

    let env = s.environment.as_ref().unwrap();
    let token = env
        .variables
        .iter()
        .find(|v| v.name == "NCCL_SOCKET_TOKEN")
        .unwrap();
    assert!(
        token.redacted && token.value == "<redacted>" && token.category == "nccl" && !token.lossy
    );

    let checks: Vec<_> = report
        .checks
        .iter()
        .map(|c| (c.rule.as_str(), &c.status))
        .collect();
    assert!(
        checks.contains(&("device_nodes", &CheckStatus::Failed)),
        "{checks:?}"
    );
    assert!(report
        .checks
        .iter()
        .all(|c| !c.codes.is_empty() && !c.detail.is_empty()));

    let codes: Vec<&str> = report.findings.iter().map(|f| f.code.as_str()).collect();
    assert_eq!(
        codes,
        ["GD008", "GD044", "GD060", "GD061", "GD004", "GD012"],
        "worst first, then by code"
    );
    for f in &report.findings {
        assert!(
            !f.title.is_empty()
                && !f.detail.is_empty()
                && !f.evidence.is_empty()
                && !f.fix.is_empty(),
            "{}",
            f.code
        );
        assert!(f
            .evidence
            .iter()
            .all(|e| !e.value.is_empty() && !e.source.is_empty()));
        assert!(f.evidence.iter().any(|e| e.fact.is_some()));
        assert!(f.fix.iter().all(|x| !x.text.is_empty()));
        assert!(f.fix.iter().any(|x| x.command.is_some()), "{}", f.code);
    }
}

#[test]
fn container_and_wsl_hints_name_their_source() {
    let root = FakeRoot::new();
    root.file(".dockerenv", "")
        .file(
            "proc/version",
            "Linux version 5.15.153.1-microsoft-standard-WSL2\n",
        )
        .file(
            "proc/self/mountinfo",
            "1041 1023 259:2 /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15 /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15 ro,nosuid,nodev,relatime master:1 - ext4 /dev/nvme0n1p2 rw\n",
        )
        .file("sys/fs/cgroup/devices/devices.list", "c 195:* m\n")
        .file(
            "var/run/secrets/kubernetes.io/serviceaccount/namespace",
            "training\n",
        )
        .file(".singularity.d/libs/libcuda.so.1", "");
    let report = parse(&run(root.cmd().args(["check", "--json"])).stdout);
    let p = report.snapshot.platform.unwrap();
    assert_eq!(p.container.kind.as_deref(), Some("docker"));
    assert_eq!(p.container.hints[0].source, "/.dockerenv");
    let given = p.container.given.expect("what the runtime gave");
    let mounts = given.nvidia_mounts.value.unwrap();
    assert_eq!(
        mounts[0].source_path,
        "/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15"
    );
    assert!(matches!(mounts[0].kind, MountKind::DriverLibrary));
    assert_eq!(mounts[0].path, mounts[0].source_path);
    assert_eq!(mounts[0].fstype, "ext4");
    let cgroup = given.device_cgroup.value.unwrap();
    assert_eq!(
        (cgroup.version, cgroup.rules),
        (1, vec!["c 195:* m".to_string()])
    );
    assert_eq!(
        given.pod_namespace.unwrap().value.as_deref(),
        Some("training")
    );
    assert_eq!(
        given.apptainer_nv_libs,
        ["/.singularity.d/libs/libcuda.so.1"]
    );
    assert_eq!((p.wsl.detected, p.wsl.version), (true, Some(2)));
    assert_eq!(p.wsl.hints[0].source, "/proc/version");
}

/// A consequence carries `caused_by` and `cause_note`; a root cause has neither.
#[test]
fn a_consequence_names_its_root_cause() {
    let root = FakeRoot::new();
    root.modules(&["nvidia_uvm", "nvidia"])
        .nvidia_version("550.127.05")
        .driver_libs("580.95.05")
        .toolkit("usr/local/cuda-13.0", "13.0.2")
        .link("/usr/local/cuda-13.0", "usr/local/cuda");
    root.gpu("0000:18:00.0", Some("nvidia"))
        .driver_gpu("0000:18:00.0", "NVIDIA H100 80GB HBM3", 0);
    let multi = "/usr/lib/x86_64-linux-gnu";
    root.ld_cache(&[
        ("libcuda.so.1", &format!("{multi}/libcuda.so.1")),
        ("libnvidia-ml.so.1", &format!("{multi}/libnvidia-ml.so.1")),
    ]);
    let r = run(root.cmd().args(["check", "--json"]));
    let report = parse(&r.stdout);
    let by_code = |code: &str| report.findings.iter().find(|f| f.code == code).unwrap();
    assert_eq!(by_code("GD017").caused_by.as_deref(), Some("GD018"));
    assert!(by_code("GD017")
        .cause_note
        .as_deref()
        .unwrap()
        .contains("reboot"));
    assert_eq!(by_code("GD018").caused_by, None);
    assert_eq!(by_code("GD018").cause_note, None);
}

#[test]
fn missing_facts_carry_a_reason() {
    let root = FakeRoot::new();
    root.remove("proc/modules")
        .bytes("proc/driver/nvidia/version", b"\x00\x01garbage\xff");
    let r = run(root.cmd().args(["check", "--json"]));
    let report = parse(&r.stdout);
    let km = report.snapshot.kernel_module.as_ref().unwrap();
    let m = km.modules.missing.as_ref().unwrap();
    assert!(km.modules.value.is_none());
    assert_eq!(m.reason, "not_found");
    assert!(m.detail.contains("not found"));
    assert_eq!(km.modules.source, "/proc/modules");
    let v = km.version_file.missing.as_ref().unwrap();
    assert_eq!(v.reason, "malformed");
}

#[test]
fn a_smoke_run_matches_the_contract() {
    use util::fake_cuda::{fake_cuda_lib, FakeCuda, FAKE_CUDA_ENV};
    let root = FakeRoot::healthy(2);
    let dir = tempfile::tempdir().unwrap();
    let mut cuda = FakeCuda::h100(2);
    for d in &mut cuda.devices {
        d.total_memory = 32 << 20;
    }
    // Every step shape: ok on GPU 0; failed (with the JIT log) and skipped on GPU 1.
    cuda.devices[1].module_error = Some(209);
    let cfg = cuda.write(dir.path());
    let cmd = |extra: &[&str]| {
        let mut c = root.cmd();
        c.args([
            "check",
            "--json",
            "--matmul-size",
            "32",
            "--transfer-size",
            "2",
        ])
        .args(extra)
        .arg("--cuda-lib")
        .arg(fake_cuda_lib())
        .env(FAKE_CUDA_ENV, &cfg);
        c
    };
    let report = parse(&run(&mut cmd(&[])).stdout);
    let smoke = report.snapshot.smoke.as_ref().expect("smoke");
    let SmokeResult::Ran { run } = &smoke.result else {
        panic!("not ran")
    };
    assert_eq!(run.devices.len(), 2);
    assert!(matches!(run.devices[0].matmul, Some(SmokeStep::Ok(_))));
    assert!(matches!(
        &run.devices[1].module,
        Some(SmokeStep::Failed {
            detail: Some(_),
            ..
        })
    ));
    assert!(matches!(
        run.devices[1].memory,
        Some(SmokeStep::Skipped { .. })
    ));
    // Both peer pairs are skipped: GPU 1 has no kernels.
    assert_eq!(run.peers.len(), 2);
    assert!(run
        .peers
        .iter()
        .all(|p| p.finished && matches!(p.copy, Some(SmokeStep::Skipped { .. }))));
    assert_eq!(report.snapshot.probes["smoke"].status, "ok");
    assert!(smoke.nccl.is_none());

    // --nccl: the request and the worker's all-reduce.
    let mut ok = cuda.clone();
    ok.devices[1].module_error = None;
    ok.write(dir.path());
    let nccl_lib = util::fake_nccl::fake_nccl_lib();
    let report = parse(&util::run(&mut cmd(&["--nccl-lib", nccl_lib.to_str().unwrap()])).stdout);
    let smoke = report.snapshot.smoke.as_ref().expect("smoke");
    let req = smoke.nccl.as_ref().expect("nccl request");
    assert_eq!(req.chosen_by, "--nccl-lib");
    assert_eq!(req.debug.as_ref().unwrap().transports, ["P2P/CUMEM/read"]);
    let SmokeResult::Ran { run: ran } = &smoke.result else {
        panic!("not ran")
    };
    let n = ran.nccl.as_ref().expect("nccl run");
    assert!(n.finished);
    assert_eq!(n.all_reduce.as_ref().unwrap().wrong_elements, 0);
    assert!(report.snapshot.nccl.is_some());

    // A hang keeps the partial run in the same shape.
    let mut hung = cuda.clone();
    hung.devices[1].module_error = None;
    hung.devices[1].hang_in = Some("cuDevicePrimaryCtxRetain".into());
    hung.write(dir.path());
    let report = parse(&util::run(&mut cmd(&["--timeout", "2"])).stdout);
    let SmokeResult::TimedOut { run, stuck_at, .. } =
        &report.snapshot.smoke.as_ref().unwrap().result
    else {
        panic!("not timed out")
    };
    assert_eq!(stuck_at.len(), 1);
    assert!(run.devices[0].finished && !run.devices[1].finished);
    assert_eq!(run.devices[1].running.as_deref(), Some("context"));
}

#[test]
fn an_image_report_matches_the_contract() {
    use std::process::Command;
    if !util::image_tools::have("umoci") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let layout = dir.path().join("layout");
    let image = format!("{}:v1", layout.display());
    let ok = |c: &mut Command| assert!(c.status().unwrap().success(), "{c:?}");
    ok(Command::new("umoci")
        .args(["init", "--layout"])
        .arg(&layout));
    ok(Command::new("umoci").args(["new", "--image", &image]));
    ok(Command::new("umoci").args([
        "config",
        "--image",
        &image,
        "--config.env=CUDA_VERSION=12.8.1",
        "--config.user=1000",
        "--config.workingdir=/work",
        "--config.label=org.opencontainers.image.title=cuda",
        "--config.entrypoint=/bin/sh",
        "--config.cmd=-c",
    ]));
    let root = FakeRoot::new();
    let r = run(root.cmd().args(["check", "--json", "--image"]).arg(&layout));
    let report = parse(&r.stdout);
    let img = report.snapshot.image.expect("the image");
    assert_eq!(img.path, layout.display().to_string());
    assert_eq!(img.format, "oci_layout");
    assert_eq!(img.reference.as_deref(), Some("v1"));
    assert!(img.manifest_digest.unwrap().starts_with("sha256:"));
    assert!(img.config_digest.starts_with("sha256:"));
    assert_eq!(img.os, "linux");
    assert!(!img.architecture.is_empty() && img.variant.is_none());
    assert!(
        img.platforms.len() <= 1 && img.matches_host,
        "{:?}",
        img.platforms
    );
    assert!(img.env.contains(&"CUDA_VERSION=12.8.1".to_string()));
    assert_eq!(img.user.as_deref(), Some("1000"));
    assert_eq!(img.working_dir.as_deref(), Some("/work"));
    assert_eq!(
        (img.entrypoint, img.cmd),
        (vec!["/bin/sh".to_string()], vec!["-c".to_string()])
    );
    assert_eq!(img.labels["org.opencontainers.image.title"], "cuda");
    for l in &img.layers {
        assert!(l.digest.starts_with("sha256:") && !l.media_type.is_empty());
        assert!(l.compressed_bytes > 0 && l.unpacked_bytes >= l.entries);
    }
    assert!(img.skipped.is_empty() && img.skipped_more == 0);
    assert_eq!(
        img.unpacked_bytes,
        img.layers.iter().map(|l| l.unpacked_bytes).sum::<u64>()
    );
}
