//! The facts a diff compares, read from a report's JSON: each with a stable key, a label
//! and its value as text. A value of None means the report does not record it.
//!
//! Entries hang together: an attribute may sit under a parent (a GPU, a Python
//! environment, "NVML answered for this GPU"); an item belongs to a list (GPUs, wheels,
//! variables) that a report records, or not. The judging is in mod.rs.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use super::Section;
use crate::facts::environment::Environment;
use crate::facts::pci::sysfs_address;
use crate::facts::platform::Platform;
use crate::snapshot::{Place, Snapshot};

pub(super) struct Entry {
    pub section: Section,
    pub label: String,
    pub value: Option<String>,
    pub role: Role,
}

pub(super) enum Role {
    /// A fact; under `parent` (an item or a scope), compared only where the parent is.
    Attr { parent: Option<String> },
    /// A member of `list`: on one side only, it was added or removed.
    Item {
        list: String,
        /// What an added or removed item reads as (else its value).
        summary: Option<String>,
        absent: &'static str,
    },
}

impl Entry {
    pub fn absent(&self) -> &'static str {
        match self.role {
            Role::Item { absent, .. } => absent,
            Role::Attr { .. } => "none",
        }
    }
}

pub(super) struct ListInfo {
    pub section: Section,
    pub label: String,
    /// The report records this list (an empty one included).
    pub recorded: bool,
    pub parent: Option<String>,
}

/// One report's facts, in report order.
#[derive(Default)]
pub(super) struct Facts {
    order: Vec<String>,
    entries: HashMap<String, Entry>,
    lists: HashMap<String, ListInfo>,
}

impl Facts {
    pub fn order(&self) -> impl Iterator<Item = &str> {
        self.order.iter().map(String::as_str)
    }

    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.get(key)
    }

    pub fn list(&self, key: &str) -> Option<&ListInfo> {
        self.lists.get(key)
    }

    /// Adds an entry; a key seen before (two variables of one name) gets `#2`, `#3`, in
    /// report order on both sides.
    fn push(&mut self, key: String, entry: Entry) -> String {
        let mut key = key;
        if self.entries.contains_key(&key) {
            let base = key.clone();
            let mut n = 2;
            while self.entries.contains_key(&key) {
                key = format!("{base}#{n}");
                n += 1;
            }
        }
        self.order.push(key.clone());
        self.entries.insert(key.clone(), entry);
        key
    }
}

/// What labels need from both reports.
pub(super) struct Context {
    /// More than one Python environment across the two: labels name the site.
    multi_env: bool,
}

impl Context {
    pub fn of(old: &Value, new: &Value) -> Context {
        let mut sites: Vec<&str> = [old, new]
            .iter()
            .flat_map(|r| array(r, "/snapshot/python"))
            .filter_map(|e| e.get("site").and_then(Value::as_str))
            .collect();
        sites.sort_unstable();
        sites.dedup();
        Context {
            multi_env: sites.len() > 1,
        }
    }
}

/// Both reports' facts; GPUs are keyed together (by UUID where either side knows it).
pub(super) fn both(old: &Value, new: &Value, ctx: &Context) -> (Facts, Facts) {
    let (mut old_gpus, mut new_gpus) = (gpu_views(old), gpu_views(new));
    // A GPU NVML counts but cannot open has no UUID or bus id: it is the GPU the other
    // report saw at the same NVML index.
    borrow_identity_by_index(&mut old_gpus, &new_gpus);
    borrow_identity_by_index(&mut new_gpus, &old_gpus);
    let (old_gpus, new_gpus) = (merge_same(old_gpus), merge_same(new_gpus));
    let mut uuid_by_bus: BTreeMap<String, String> = BTreeMap::new();
    for g in old_gpus.iter().chain(&new_gpus) {
        if let (Some(u), Some(b)) = (&g.uuid, &g.bus) {
            uuid_by_bus.entry(b.clone()).or_insert_with(|| u.clone());
        }
    }
    (
        facts(old, old_gpus, &uuid_by_bus, ctx),
        facts(new, new_gpus, &uuid_by_bus, ctx),
    )
}

fn facts(
    report: &Value,
    gpus: Vec<GpuView<'_>>,
    uuid_by_bus: &BTreeMap<String, String>,
    ctx: &Context,
) -> Facts {
    let mut b = Builder {
        facts: Facts::default(),
        section: Section::Host,
    };
    host(&mut b, report);
    b.section = Section::Driver;
    driver(&mut b, report);
    b.section = Section::Gpus;
    gpu_facts(&mut b, report, gpus, uuid_by_bus);
    b.section = Section::Toolkits;
    toolkits(&mut b, report);
    libraries(&mut b, report);
    b.section = Section::Python;
    python(&mut b, report, ctx);
    b.section = Section::Environment;
    environment(&mut b, report);
    b.facts
}

struct Builder {
    facts: Facts,
    section: Section,
}

impl Builder {
    /// A fact; one the report does not record (None) is left out, so that its absence is
    /// judged against its parent.
    fn attr(&mut self, key: &str, label: &str, value: Option<String>, parent: Option<&str>) {
        if value.is_some() {
            self.push_attr(key, label, value, parent);
        }
    }

    fn push_attr(&mut self, key: &str, label: &str, value: Option<String>, parent: Option<&str>) {
        self.facts.push(
            key.to_string(),
            Entry {
                section: self.section,
                label: label.to_string(),
                value,
                role: Role::Attr {
                    parent: parent.map(str::to_string),
                },
            },
        );
    }

    /// An anchor without a value: the attributes under it are compared only where it is.
    fn scope(&mut self, key: &str, parent: Option<&str>) {
        self.push_attr(key, key, None, parent);
    }

    fn list(&mut self, key: &str, label: &str, recorded: bool, parent: Option<&str>) {
        self.facts.lists.insert(
            key.to_string(),
            ListInfo {
                section: self.section,
                label: label.to_string(),
                recorded,
                parent: parent.map(str::to_string),
            },
        );
    }

    /// Returns the key used (a duplicate gets a suffix).
    fn item(
        &mut self,
        list: &str,
        key: String,
        label: String,
        value: Option<String>,
        summary: Option<String>,
        absent: &'static str,
    ) -> String {
        self.facts.push(
            key,
            Entry {
                section: self.section,
                label,
                value,
                role: Role::Item {
                    list: list.to_string(),
                    summary,
                    absent,
                },
            },
        )
    }
}

// ---- reading JSON ----

/// Any JSON value as text: strings as they are, yes/no, none for null, lists comma-joined.
fn text(v: &Value) -> String {
    match v {
        Value::Null => "none".into(),
        Value::Bool(b) => if *b { "yes" } else { "no" }.into(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        Value::Array(a) if a.is_empty() => "none".into(),
        Value::Array(a) => a.iter().map(text).collect::<Vec<_>>().join(", "),
        Value::Object(_) => v.to_string(),
    }
}

fn on_off(v: &Value) -> Option<String> {
    v.as_bool()
        .map(|b| if b { "on" } else { "off" }.to_string())
}

/// The value at `pointer` as text; None when the report has no such field.
fn at(report: &Value, pointer: &str) -> Option<String> {
    report.pointer(pointer).map(text)
}

fn array<'a>(v: &'a Value, pointer: &str) -> &'a [Value] {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// A probed fact (`{"source", "value"}` or `{"source", "missing"}`) through `f`; a missing
/// one reads "missing (not found)"; null reads "none".
fn fact_with(v: Option<&Value>, f: impl Fn(&Value) -> Option<String>) -> Option<String> {
    let v = v?;
    if v.is_null() {
        return Some("none".into());
    }
    if let Some(value) = v.get("value") {
        return f(value);
    }
    let reason = v.pointer("/missing/reason")?.as_str()?;
    Some(format!("missing ({})", reason.replace('_', " ")))
}

fn fact(v: Option<&Value>) -> Option<String> {
    fact_with(v, |x| Some(text(x)))
}

/// An NVML answer (`{"value"}`, "not_supported", "not_in_driver", `{"error"}`) through `f`.
fn field_with(v: Option<&Value>, f: impl Fn(&Value) -> Option<String>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.replace('_', " ").replace("in driver", "in this driver")),
        Value::Object(o) => {
            if let Some(value) = o.get("value") {
                f(value)
            } else {
                o.get("error").map(|e| format!("error: {}", text(e)))
            }
        }
        _ => None,
    }
}

fn field(v: Option<&Value>) -> Option<String> {
    field_with(v, |x| Some(text(x)))
}

fn mib(bytes: &Value) -> Option<String> {
    bytes.as_u64().map(|b| format!("{} MiB", b >> 20))
}

// ---- sections ----

fn host(b: &mut Builder, r: &Value) {
    b.attr(
        "host.hostname",
        "Hostname",
        at(r, "/snapshot/node/hostname"),
        None,
    );
    b.attr(
        "host.machine_id",
        "Machine id (hashed)",
        at(r, "/snapshot/node/machine_id"),
        None,
    );
    let root = r
        .pointer("/snapshot/root")
        .map(|v| v.as_str().map_or("this system".into(), |s| s.to_string()));
    b.attr("host.root", "Inspected", root, None);
    b.attr("host.place", "Runs in", place(r), None);
    b.attr(
        "host.os",
        "OS",
        fact_with(r.pointer("/snapshot/platform/os"), |v| {
            v.get("pretty_name").map(text)
        }),
        None,
    );
    b.attr(
        "host.kernel",
        "Linux kernel",
        fact(r.pointer("/snapshot/platform/kernel_release")),
        None,
    );
    b.attr(
        "host.arch",
        "Architecture",
        fact(r.pointer("/snapshot/platform/arch")),
        None,
    );
    let user = r.pointer("/snapshot/identity").and_then(|id| {
        let uid = id.get("uid")?.as_u64()?;
        Some(match id.get("user_name").and_then(Value::as_str) {
            Some(name) => format!("{name} (uid {uid})"),
            None => format!("uid {uid}"),
        })
    });
    b.attr("host.user", "User", user, None);
    let groups = r.pointer("/snapshot/identity/groups").map(|g| {
        let mut ids: Vec<u64> = g
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_u64)
            .collect();
        ids.sort_unstable();
        ids.dedup();
        text(&Value::from(ids))
    });
    b.attr("host.groups", "Groups (gids)", groups, None);
    b.attr(
        "host.shm",
        "Shared memory (/dev/shm)",
        fact_with(r.pointer("/snapshot/platform/shm_kib"), |v| {
            v.as_u64().map(|k| format!("{} MiB", k >> 10))
        }),
        None,
    );
}

/// Host, VM, container, Kubernetes pod or WSL, decided as the rules decide it.
fn place(r: &Value) -> Option<String> {
    let platform: Platform =
        serde_json::from_value(r.pointer("/snapshot/platform")?.clone()).ok()?;
    let environment: Option<Environment> = r
        .pointer("/snapshot/environment")
        .and_then(|e| serde_json::from_value(e.clone()).ok());
    let snap = Snapshot {
        platform: Some(platform),
        environment,
        ..Snapshot::default()
    };
    Some(match snap.place() {
        Place::Host => "host".to_string(),
        Place::VirtualMachine => "virtual machine".to_string(),
        Place::Container => format!("container ({})", snap.container_kind().unwrap_or("?")),
        Place::KubernetesPod => "Kubernetes pod".to_string(),
        Place::Wsl => match snap.platform.as_ref().and_then(|p| p.wsl.version) {
            Some(v) => format!("WSL{v}"),
            None => "WSL".to_string(),
        },
    })
}

fn driver(b: &mut Builder, r: &Value) {
    let derived = |p: &str, f: fn(&Value) -> Option<String>| {
        r.pointer(p).map(|v| {
            if v.is_null() {
                "none".to_string()
            } else {
                f(v).unwrap_or_else(|| text(v))
            }
        })
    };
    let version = |v: &Value| v.get("version").map(text);
    let count = |v: &Value| v.get("count").map(text);
    b.attr(
        "driver.version",
        "Driver version",
        derived("/derived/driver", version),
        None,
    );
    b.attr(
        "driver.cuda",
        "Newest CUDA the driver supports",
        derived("/derived/cuda_driver_version", |_| None),
        None,
    );
    b.attr(
        "driver.gpu_count",
        "GPUs visible",
        derived("/derived/gpu_count", count),
        None,
    );
    b.attr(
        "driver.gpus_initialised",
        "GPUs the driver initialised",
        derived("/derived/driver_gpu_count", count),
        None,
    );

    let modules = r.pointer("/snapshot/kernel_module/modules");
    let names = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m.get("name").and_then(Value::as_str))
            .map(str::to_string)
            .collect()
    };
    b.attr(
        "kernel_module.loaded",
        "Kernel module loaded",
        fact_with(modules, |v| {
            Some(text(&Value::Bool(names(v).iter().any(|n| n == "nvidia"))))
        }),
        None,
    );
    b.attr(
        "kernel_module.modules",
        "GPU kernel modules",
        fact_with(modules, |v| {
            let mut n: Vec<String> = names(v)
                .into_iter()
                .filter(|n| n.starts_with("nvidia") || n == "nouveau")
                .collect();
            n.sort();
            Some(text(&Value::from(n)))
        }),
        None,
    );
    let version_file = r.pointer("/snapshot/kernel_module/version_file");
    b.attr(
        "kernel_module.version",
        "Kernel module version",
        fact_with(version_file, |v| v.get("version").map(text)),
        None,
    );
    // The flavour only where the version file was read: its absence is said once above.
    if version_file.is_some_and(|v| v.get("value").is_some()) {
        b.scope("kernel_module.version_file", None);
    }
    b.attr(
        "kernel_module.flavour",
        "Kernel module flavour",
        version_file
            .and_then(|v| v.pointer("/value/flavor"))
            .map(text),
        Some("kernel_module.version_file"),
    );

    let nvml = r.pointer("/snapshot/nvml").map(|n| {
        if n.is_null() {
            return "not run".to_string();
        }
        let res = n.get("result").unwrap_or(&Value::Null);
        let s = |k: &str| res.get(k).map(text).unwrap_or_default();
        match res.get("status").and_then(Value::as_str) {
            Some("ok") => "answered".into(),
            Some("not_probed") => format!("not probed: {}", s("reason")),
            Some("init_failed") => format!("init failed: {}", s("code")),
            Some("timed_out") => format!("timed out after {} s", s("seconds")),
            Some("crashed") => format!("crashed (signal {})", s("signal")),
            Some("worker_failed") => "worker failed".into(),
            Some(other) => other.replace('_', " "),
            None => text(res),
        }
    });
    b.attr("nvml.status", "NVML", nvml, None);

    let nodes = r.pointer("/snapshot/device_nodes/nodes");
    b.list(
        "dev",
        "Device nodes",
        nodes.is_some_and(Value::is_array),
        None,
    );
    for n in array(r, "/snapshot/device_nodes/nodes") {
        let Some(path) = n.get("path").and_then(Value::as_str) else {
            continue;
        };
        let s = |k: &str| n.get(k).and_then(Value::as_str).unwrap_or("?");
        let present = n.get("present").and_then(Value::as_bool);
        // A node the probe did not list is as missing as one it found absent.
        if present == Some(false) {
            continue;
        }
        let value = present.map(|_| format!("{} {}:{}", s("mode"), s("owner"), s("group")));
        let key = b.item(
            "dev",
            format!("dev[{path}]"),
            path.to_string(),
            value,
            None,
            "missing",
        );
        if present == Some(true) {
            b.attr(
                &format!("{key}.access"),
                &format!("{path} read/write"),
                n.pointer("/access/read_write").map(text),
                Some(&key),
            );
        }
    }
}

/// One GPU as the report knows it, from NVML, the driver's list and PCI.
struct GpuView<'a> {
    uuid: Option<String>,
    bus: Option<String>,
    name: Option<String>,
    nvml: Option<&'a Value>,
    driver: Option<&'a Value>,
    pci: Option<&'a Value>,
}

fn nvml_system(r: &Value) -> Option<&Value> {
    let res = r.pointer("/snapshot/nvml/result")?;
    match res.get("status").and_then(Value::as_str)? {
        "ok" => res.get("system"),
        "timed_out" => res.get("partial").filter(|p| p.is_object()),
        _ => None,
    }
}

/// Whether the report says which GPUs there are: some source answered.
fn gpus_recorded(r: &Value) -> bool {
    nvml_system(r).is_some()
        || r.pointer("/snapshot/kernel_module/gpus/value").is_some()
        || r.pointer("/snapshot/pci/devices/value").is_some()
}

fn nvml_index(g: &GpuView<'_>) -> Option<u64> {
    g.nvml?.get("index").and_then(Value::as_u64)
}

fn borrow_identity_by_index(gpus: &mut [GpuView<'_>], other: &[GpuView<'_>]) {
    for g in gpus
        .iter_mut()
        .filter(|g| g.uuid.is_none() && g.bus.is_none())
    {
        let Some(i) = nvml_index(g) else { continue };
        if let Some(o) = other.iter().find(|o| nvml_index(o) == Some(i)) {
            g.uuid = o.uuid.clone();
            g.bus = o.bus.clone();
            g.name = g.name.take().or_else(|| o.name.clone());
        }
    }
}

/// Views of one GPU (now that an NVML-only view knows its identity) as one.
fn merge_same(gpus: Vec<GpuView<'_>>) -> Vec<GpuView<'_>> {
    let mut out: Vec<GpuView<'_>> = Vec::new();
    for g in gpus {
        let same = |v: &GpuView<'_>| {
            (g.uuid.is_some() && v.uuid == g.uuid) || (g.bus.is_some() && v.bus == g.bus)
        };
        match out.iter_mut().find(|v| same(v)) {
            Some(v) => {
                v.nvml = v.nvml.or(g.nvml);
                v.driver = v.driver.or(g.driver);
                v.pci = v.pci.or(g.pci);
                v.uuid = v.uuid.take().or(g.uuid);
                v.bus = v.bus.take().or(g.bus);
                v.name = v.name.take().or(g.name);
            }
            None => out.push(g),
        }
    }
    out
}

fn gpu_views(r: &Value) -> Vec<GpuView<'_>> {
    let mut views: Vec<GpuView<'_>> = Vec::new();
    let nvml_devices = nvml_system(r)
        .and_then(|s| s.get("devices"))
        .and_then(Value::as_array);
    for d in nvml_devices.into_iter().flatten() {
        let val = |k: &str| d.pointer(&format!("/{k}/value")).and_then(Value::as_str);
        views.push(GpuView {
            uuid: val("uuid").map(str::to_string),
            bus: val("pci_bus_id").map(sysfs_address),
            name: val("name").map(str::to_string),
            nvml: Some(d),
            driver: None,
            pci: None,
        });
    }
    for g in array(r, "/snapshot/kernel_module/gpus/value") {
        let uuid = g.get("uuid").and_then(Value::as_str).map(str::to_string);
        let bus = g.get("bus_id").and_then(Value::as_str).map(sysfs_address);
        let same =
            |v: &GpuView| (uuid.is_some() && v.uuid == uuid) || (bus.is_some() && v.bus == bus);
        match views.iter_mut().find(|v| v.driver.is_none() && same(v)) {
            Some(v) => {
                v.driver = Some(g);
                v.uuid = v.uuid.take().or(uuid);
                v.bus = v.bus.take().or(bus);
            }
            None => views.push(GpuView {
                uuid,
                bus,
                name: g.get("model").and_then(Value::as_str).map(str::to_string),
                nvml: None,
                driver: Some(g),
                pci: None,
            }),
        }
    }
    let pci_gpus = array(r, "/snapshot/pci/devices/value")
        .iter()
        .filter(|d| d.get("role").and_then(Value::as_str) == Some("gpu"));
    for d in pci_gpus {
        let bus = d.get("address").and_then(Value::as_str).map(sysfs_address);
        match views
            .iter_mut()
            .find(|v| v.pci.is_none() && bus.is_some() && v.bus == bus)
        {
            Some(v) => v.pci = Some(d),
            None => views.push(GpuView {
                uuid: None,
                bus,
                name: None,
                nvml: None,
                driver: None,
                pci: Some(d),
            }),
        }
    }
    views
}

fn gpu_facts(
    b: &mut Builder,
    r: &Value,
    gpus: Vec<GpuView<'_>>,
    uuid_by_bus: &BTreeMap<String, String>,
) {
    b.list("gpu", "GPUs", gpus_recorded(r), None);
    for (i, g) in gpus.into_iter().enumerate() {
        let uuid = g
            .uuid
            .clone()
            .or_else(|| g.bus.as_ref().and_then(|b| uuid_by_bus.get(b).cloned()));
        let id = uuid
            .clone()
            .or_else(|| g.bus.clone())
            .unwrap_or_else(|| format!("#{i}"));
        let label = format!("GPU {}", g.bus.as_deref().unwrap_or(&id));
        let summary = match (&g.name, &uuid) {
            (Some(n), Some(u)) => format!("{n} ({u})"),
            (Some(n), None) => n.clone(),
            (None, Some(u)) => u.clone(),
            (None, None) => "a GPU".into(),
        };
        let key = b.item(
            "gpu",
            format!("gpu[{id}]"),
            label.clone(),
            None,
            Some(summary),
            "not present",
        );
        let sub = |what: &str| format!("{label}: {what}");
        if let Some(d) = g.nvml {
            let scope = format!("{key}.nvml");
            b.scope(&scope, Some(&key));
            let p = Some(scope.as_str());
            let f = |k: &str| d.pointer(k);
            let mut put = |suffix: &str, what: &str, value: Option<String>| {
                b.attr(&format!("{key}.{suffix}"), &sub(what), value, p);
            };
            put("name", "name", field(f("/name")));
            put(
                "bus_id",
                "PCI bus id",
                field_with(f("/pci_bus_id"), |v| v.as_str().map(sysfs_address)),
            );
            put(
                "memory",
                "memory",
                field_with(f("/memory"), |v| v.get("total").and_then(mib)),
            );
            put(
                "compute_capability",
                "compute capability",
                field(f("/compute_capability")),
            );
            put(
                "pcie.width",
                "PCIe link width",
                field_with(f("/pcie/width"), |v| Some(format!("x{}", text(v)))),
            );
            // The current generation is left out: an idle GPU drops to Gen1 to save power.
            let max_gen = field_with(f("/pcie/max_generation"), |v| {
                Some(format!("Gen{}", text(v)))
            });
            let max_width = field_with(f("/pcie/max_width"), |v| Some(format!("x{}", text(v))));
            let max = match (max_gen, max_width) {
                (Some(g_), Some(w)) => Some(format!("{g_} {w}")),
                (g_, w) => g_.or(w),
            };
            put("pcie.max", "PCIe maximum link", max);
            put(
                "persistence_mode",
                "persistence mode",
                field_with(f("/persistence_mode"), on_off),
            );
            put("compute_mode", "compute mode", field(f("/compute_mode")));
            put(
                "mig.mode",
                "MIG mode",
                field_with(f("/mig/enabled"), on_off),
            );
            put(
                "mig.instances",
                "MIG instances",
                f("/mig/instances")
                    .and_then(Value::as_array)
                    .map(|a| a.len().to_string()),
            );
            put("ecc.mode", "ECC", field_with(f("/ecc/enabled"), on_off));
            put(
                "ecc.uncorrected",
                "uncorrectable ECC errors (lifetime)",
                field(f("/ecc/aggregate_uncorrected")),
            );
            put(
                "remapped_rows",
                "remapped rows",
                field_with(f("/remapped_rows"), |v| {
                    let n = |k: &str| v.get(k).map(text).unwrap_or_else(|| "?".into());
                    let mut s = format!(
                        "{} correctable, {} uncorrectable",
                        n("correctable"),
                        n("uncorrectable")
                    );
                    if v.get("pending") == Some(&Value::Bool(true)) {
                        s.push_str(", remap pending");
                    }
                    if v.get("failure") == Some(&Value::Bool(true)) {
                        s.push_str(", remap failed");
                    }
                    Some(s)
                }),
            );
            put(
                "retired_pages_pending",
                "page retirement pending",
                field(f("/retired_pages_pending")),
            );
            put(
                "power_limit",
                "power limit",
                field_with(f("/power_limit_mw"), |v| {
                    v.as_u64().map(|mw| format!("{} W", mw / 1000))
                }),
            );
            put(
                "nvlinks",
                "NVLinks up",
                field_with(f("/nvlinks"), |v| {
                    let links = v.as_array()?;
                    let up = links.iter().filter(|l| l.as_bool() == Some(true)).count();
                    Some(format!("{up} of {}", links.len()))
                }),
            );
            put(
                "fabric",
                "fabric",
                field_with(f("/fabric"), |v| {
                    let state = v.get("state").map(text).unwrap_or_default();
                    Some(match v.get("status").filter(|s| !s.is_null()) {
                        Some(s) => format!("{state} ({})", text(s)),
                        None => state,
                    })
                }),
            );
            put(
                "recovery_action",
                "recovery action",
                field(f("/recovery_action")),
            );
            put(
                "handle",
                "NVML handle",
                f("/handle_error").map(|e| {
                    if e.is_null() {
                        "ok".into()
                    } else {
                        format!("error: {}", text(e))
                    }
                }),
            );
        }
        if let Some(d) = g.driver {
            let scope = format!("{key}.driver");
            b.scope(&scope, Some(&key));
            b.attr(
                &format!("{key}.vbios"),
                &sub("VBIOS"),
                d.get("video_bios").map(text),
                Some(&scope),
            );
        }
        if let Some(d) = g.pci {
            let scope = format!("{key}.pci");
            b.scope(&scope, Some(&key));
            b.attr(
                &format!("{key}.bound_driver"),
                &sub("bound to driver"),
                d.get("driver").map(text),
                Some(&scope),
            );
        }
    }
}

fn toolkits(b: &mut Builder, r: &Value) {
    let t = "/snapshot/toolkits";
    let in_use = r.pointer("/derived/toolkit_in_use").map(|v| match v {
        Value::Null => "none".to_string(),
        _ => {
            let root = v.get("root").map(text).unwrap_or_default();
            match v.get("cuda").and_then(Value::as_str) {
                Some(c) => format!("{root} (CUDA {c})"),
                None => root,
            }
        }
    });
    b.attr("toolkits.in_use", "Toolkit builds use", in_use, None);
    b.attr(
        "toolkits.cuda_home",
        "CUDA_HOME resolves to",
        r.pointer(&format!("{t}/cuda_home/path"))
            .map(|v| v.as_str().unwrap_or("nothing").to_string()),
        None,
    );
    b.attr(
        "toolkits.nvcc",
        "nvcc on PATH",
        r.pointer(&format!("{t}/nvcc_on_path")).map(|v| match v {
            Value::Null => "none".to_string(),
            _ => v
                .get("resolved")
                .or(v.get("path"))
                .map(text)
                .unwrap_or_default(),
        }),
        None,
    );
    b.attr(
        "toolkits.usr_local_cuda",
        "/usr/local/cuda points to",
        at(r, &format!("{t}/usr_local_cuda")),
        None,
    );
    let installs = format!("{t}/installs");
    b.list(
        "toolkit",
        "CUDA toolkits",
        r.pointer(&installs).is_some_and(Value::is_array),
        None,
    );
    for tk in array(r, &installs) {
        let Some(root) = tk.get("root").and_then(Value::as_str) else {
            continue;
        };
        b.item(
            "toolkit",
            format!("toolkit[{root}]"),
            format!("CUDA toolkit {root}"),
            fact(tk.get("version")),
            None,
            "not installed",
        );
    }
    let conda = format!("{t}/conda_packages");
    b.list(
        "conda",
        "conda CUDA packages",
        r.pointer(&conda).is_some_and(Value::is_array),
        None,
    );
    for p in array(r, &conda) {
        let Some(name) = p.get("name").and_then(Value::as_str) else {
            continue;
        };
        b.item(
            "conda",
            format!("conda[{name}]"),
            format!("conda package {name}"),
            p.get("version").map(text),
            None,
            "not installed",
        );
    }
}

/// The file the loader picks for each library soname.
fn libraries(b: &mut Builder, r: &Value) {
    let libs = "/snapshot/libraries/libraries";
    b.list(
        "lib",
        "Libraries",
        r.pointer(libs).is_some_and(Value::is_array),
        None,
    );
    for lib in array(r, libs) {
        let Some(soname) = lib.get("soname").and_then(Value::as_str) else {
            continue;
        };
        let family = lib.get("family").and_then(Value::as_str).unwrap_or("");
        let winner = lib
            .get("winner")
            .and_then(Value::as_u64)
            .and_then(|i| lib.get("candidates")?.get(usize::try_from(i).ok()?));
        // Not found is as absent as not looked for (the libraries looked for follow the
        // toolkits and torch found).
        let value = match winner {
            None => continue,
            Some(c) => {
                let file = c
                    .get("target")
                    .filter(|t| !t.is_null())
                    .or(c.get("path"))
                    .map(text)
                    .unwrap_or_default();
                match c.get("version").and_then(Value::as_str) {
                    Some(v) => format!("{v} ({file})"),
                    None => file,
                }
            }
        };
        let driver_side = family.starts_with("libcuda") || family.starts_with("libnvidia");
        let section = std::mem::replace(
            &mut b.section,
            if driver_side {
                Section::Driver
            } else {
                Section::Toolkits
            },
        );
        b.item(
            "lib",
            format!("lib[{soname}]"),
            format!("{soname} loads"),
            Some(value),
            None,
            "not found",
        );
        b.section = section;
    }
}

fn python(b: &mut Builder, r: &Value, ctx: &Context) {
    b.list(
        "python",
        "Python environments",
        r.pointer("/snapshot/python").is_some_and(Value::is_array),
        None,
    );
    for env in array(r, "/snapshot/python") {
        let Some(site) = env.get("site").and_then(Value::as_str) else {
            continue;
        };
        let in_env = |what: &str| {
            if ctx.multi_env {
                format!("{what} in {site}")
            } else {
                what.to_string()
            }
        };
        let summary = match env.get("python").and_then(Value::as_str) {
            Some(v) => format!("Python {v}"),
            None => "present".into(),
        };
        let key = b.item(
            "python",
            format!("python[{site}]"),
            format!("Python environment {site}"),
            None,
            Some(summary),
            "not found",
        );
        b.attr(
            &format!("{key}.python"),
            &in_env("Python version"),
            env.get("python").map(text),
            Some(&key),
        );

        let torch_list = format!("{key}.torch");
        b.list(
            &torch_list,
            &in_env("torch"),
            env.get("torch").is_some(),
            Some(&key),
        );
        if let Some(t) = env.get("torch").filter(|t| t.is_object()) {
            let version = fact(t.get("version"))
                .filter(|v| !v.starts_with("missing"))
                .or_else(|| t.get("dist_version").map(text));
            let tkey = b.item(
                &torch_list,
                format!("{key}.torch"),
                in_env("torch"),
                version,
                None,
                "not installed",
            );
            b.attr(
                &format!("{tkey}.cuda"),
                &in_env("torch CUDA build"),
                t.get("cuda").map(|c| match c {
                    Value::Null => "none (CPU or ROCm build)".into(),
                    _ => text(c),
                }),
                Some(&tkey),
            );
            b.attr(
                &format!("{tkey}.arches"),
                &in_env("torch GPU architectures"),
                fact_with(t.get("arches"), |v| v.get("arch_list").map(text)),
                Some(&tkey),
            );
        }

        for (field, one, what) in [
            ("nvidia_wheels", "wheel", "NVIDIA wheels"),
            ("companions", "companion", "torch companions"),
            ("frameworks", "framework", "other GPU frameworks"),
        ] {
            let list = format!("{key}.{field}");
            b.list(
                &list,
                &in_env(what),
                env.get(field).is_some_and(Value::is_array),
                Some(&key),
            );
            for d in env
                .get(field)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let Some(name) = d.get("name").and_then(Value::as_str) else {
                    continue;
                };
                b.item(
                    &list,
                    format!("{key}.{one}[{name}]"),
                    in_env(name),
                    d.get("version").map(text),
                    None,
                    "not installed",
                );
            }
        }
    }
    let live = r.pointer("/snapshot/python_live/result").and_then(|res| {
        (res.get("status")?.as_str()? == "ok")
            .then(|| res.pointer("/answer/is_available"))
            .flatten()
            .map(text)
    });
    b.attr(
        "python.is_available",
        "torch.cuda.is_available()",
        live,
        None,
    );
}

/// Variables that steer CUDA, PyTorch, NCCL and containers (not gpudoctor's own).
fn environment(b: &mut Builder, r: &Value) {
    let vars = "/snapshot/environment/variables";
    b.list(
        "env",
        "Environment variables",
        r.pointer(vars).is_some_and(Value::is_array),
        None,
    );
    for v in array(r, vars) {
        let Some(name) = v.get("name").and_then(Value::as_str) else {
            continue;
        };
        if v.get("category").and_then(Value::as_str) == Some("tool") {
            continue;
        }
        b.item(
            "env",
            format!("env[{name}]"),
            name.to_string(),
            v.get("value").map(text),
            None,
            "unset",
        );
    }
}
