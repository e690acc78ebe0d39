//! The facts a diff compares, read from a typed report (v1.rs): each with a stable key, a
//! label and its value as text. A value of None means the report does not record it.
//!
//! Entries hang together: an attribute may sit under a parent (a GPU, a Python
//! environment, "NVML answered for this GPU"); an item belongs to a list (GPUs, wheels,
//! variables) that a report records, or not. The judging is in mod.rs.

use std::collections::{BTreeMap, HashMap};

use super::v1::{self, Answer, Fact, Report, Seen};
use super::Section;
use crate::facts::pci::sysfs_address;
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
    pub fn of(old: &Report, new: &Report) -> Context {
        let mut sites: Vec<&str> = [old, new]
            .iter()
            .flat_map(|r| r.snapshot.python.iter().flatten())
            .filter_map(|e| e.site.as_deref())
            .collect();
        sites.sort_unstable();
        sites.dedup();
        Context {
            multi_env: sites.len() > 1,
        }
    }
}

/// Both reports' facts; GPUs are keyed together (by UUID where either side knows it).
pub(super) fn both(old: &Report, new: &Report, ctx: &Context) -> (Facts, Facts) {
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
    report: &Report,
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

// ---- values as text ----

fn yes_no(b: bool) -> String {
    if b { "yes" } else { "no" }.into()
}

fn on_off(b: &bool) -> Option<String> {
    Some(if *b { "on" } else { "off" }.to_string())
}

/// A list comma-joined; an empty one reads "none".
fn joined<T: AsRef<str>>(items: &[T]) -> String {
    if items.is_empty() {
        return "none".into();
    }
    items
        .iter()
        .map(AsRef::as_ref)
        .collect::<Vec<_>>()
        .join(", ")
}

/// A field as written: `null` reads "none"; None when the report lacks it.
fn seen_text<T: ToString>(v: &Seen<T>) -> Option<String> {
    seen_with(v, "none", |x| Some(x.to_string()))
}

/// A field through `f`, `null` reading `null_text`.
fn seen_with<T>(v: &Seen<T>, null_text: &str, f: impl Fn(&T) -> Option<String>) -> Option<String> {
    match v.as_ref()? {
        None => Some(null_text.to_string()),
        Some(x) => f(x),
    }
}

/// A probed fact through `f`; a missing one reads "missing (not found)"; null reads "none".
fn fact_with<T>(v: &Seen<Fact<T>>, f: impl Fn(&T) -> Option<String>) -> Option<String> {
    seen_with(v, "none", |fact| fact_of(fact, &f))
}

fn fact_of<T>(fact: &Fact<T>, f: impl Fn(&T) -> Option<String>) -> Option<String> {
    if let Some(value) = &fact.value {
        return f(value);
    }
    let reason = fact.missing.as_ref()?.reason.as_ref()?;
    Some(format!("missing ({})", reason.replace('_', " ")))
}

fn fact<T: ToString>(v: &Seen<Fact<T>>) -> Option<String> {
    fact_with(v, |x| Some(x.to_string()))
}

/// An NVML answer through `f`: its value, its word ("not supported"), or its error.
fn field_with<T>(v: Option<&Answer<T>>, f: impl Fn(&T) -> Option<String>) -> Option<String> {
    match v? {
        Answer::Value(x) => f(x),
        Answer::Word(w) => Some(w.replace('_', " ").replace("in driver", "in this driver")),
        Answer::Error(e) => Some(format!("error: {e}")),
        Answer::Other => None,
    }
}

fn field<T: ToString>(v: Option<&Answer<T>>) -> Option<String> {
    field_with(v, |x| Some(x.to_string()))
}

fn mib(bytes: u64) -> String {
    format!("{} MiB", bytes >> 20)
}

// ---- sections ----

fn host(b: &mut Builder, r: &Report) {
    let s = &r.snapshot;
    let node = s.node.as_ref();
    b.attr(
        "host.hostname",
        "Hostname",
        node.and_then(|n| seen_text(&n.hostname)),
        None,
    );
    b.attr(
        "host.machine_id",
        "Machine id (hashed)",
        node.and_then(|n| seen_text(&n.machine_id)),
        None,
    );
    let root = seen_with(&s.root, "this system", |r| Some(r.clone()));
    b.attr("host.root", "Inspected", root, None);
    b.attr("host.place", "Runs in", place(r), None);
    let platform = s.platform.as_ref().map(|p| &p.view);
    b.attr(
        "host.os",
        "OS",
        platform.and_then(|p| fact_with(&p.os, |os| os.pretty_name.clone())),
        None,
    );
    b.attr(
        "host.kernel",
        "Linux kernel",
        platform.and_then(|p| fact(&p.kernel_release)),
        None,
    );
    b.attr(
        "host.arch",
        "Architecture",
        platform.and_then(|p| fact(&p.arch)),
        None,
    );
    let user = s.identity.as_ref().and_then(|id| {
        let uid = id.uid?;
        Some(match &id.user_name {
            Some(name) => format!("{name} (uid {uid})"),
            None => format!("uid {uid}"),
        })
    });
    b.attr("host.user", "User", user, None);
    let groups = s.identity.as_ref().and_then(|id| {
        let mut ids = id.groups.clone()?.unwrap_or_default();
        ids.sort_unstable();
        ids.dedup();
        Some(joined(&ids.iter().map(u64::to_string).collect::<Vec<_>>()))
    });
    b.attr("host.groups", "Groups (gids)", groups, None);
    b.attr(
        "host.shm",
        "Shared memory (/dev/shm)",
        platform.and_then(|p| fact_with(&p.shm_kib, |k| Some(format!("{} MiB", k >> 10)))),
        None,
    );
}

/// Host, VM, container, Kubernetes pod or WSL, decided as the rules decide it.
fn place(r: &Report) -> Option<String> {
    let platform = r.snapshot.platform.as_ref()?.typed.clone()?;
    let environment = r
        .snapshot
        .environment
        .as_ref()
        .and_then(|e| e.typed.clone());
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

fn driver(b: &mut Builder, r: &Report) {
    let derived = r.derived.as_ref();
    b.attr(
        "driver.version",
        "Driver version",
        derived.and_then(|d| seen_with(&d.driver, "none", |v| v.version.clone())),
        None,
    );
    b.attr(
        "driver.cuda",
        "Newest CUDA the driver supports",
        derived.and_then(|d| seen_text(&d.cuda_driver_version)),
        None,
    );
    b.attr(
        "driver.gpu_count",
        "GPUs visible",
        derived.and_then(|d| seen_with(&d.gpu_count, "none", |c| c.count.map(|n| n.to_string()))),
        None,
    );
    b.attr(
        "driver.gpus_initialised",
        "GPUs the driver initialised",
        derived.and_then(|d| {
            seen_with(&d.driver_gpu_count, "none", |c| {
                c.count.map(|n| n.to_string())
            })
        }),
        None,
    );

    let km = r.snapshot.kernel_module.as_ref();
    let names = |mods: &Vec<v1::LoadedModule>| -> Vec<String> {
        mods.iter().filter_map(|m| m.name.clone()).collect()
    };
    b.attr(
        "kernel_module.loaded",
        "Kernel module loaded",
        km.and_then(|k| {
            fact_with(&k.modules, |m| {
                Some(yes_no(names(m).iter().any(|n| n == "nvidia")))
            })
        }),
        None,
    );
    b.attr(
        "kernel_module.modules",
        "GPU kernel modules",
        km.and_then(|k| {
            fact_with(&k.modules, |m| {
                let mut n: Vec<String> = names(m)
                    .into_iter()
                    .filter(|n| n.starts_with("nvidia") || n == "nouveau")
                    .collect();
                n.sort();
                Some(joined(&n))
            })
        }),
        None,
    );
    let version_file = km.and_then(|k| k.version_file.as_ref());
    b.attr(
        "kernel_module.version",
        "Kernel module version",
        km.and_then(|k| fact_with(&k.version_file, |v| v.version.clone())),
        None,
    );
    // The flavour only where the version file was read: its absence is said once above.
    let read = version_file.and_then(|v| v.as_ref()?.value.as_ref());
    if read.is_some() {
        b.scope("kernel_module.version_file", None);
    }
    b.attr(
        "kernel_module.flavour",
        "Kernel module flavour",
        read.and_then(|v| seen_text(&v.flavor)),
        Some("kernel_module.version_file"),
    );

    let nvml = seen_with(&r.snapshot.nvml, "not run", |n| {
        let Some(res) = &n.result else {
            return Some("none".into());
        };
        let s = |v: Option<String>| v.unwrap_or_default();
        let num = |n: &Option<serde_json::Number>| n.as_ref().map(ToString::to_string);
        Some(match res.status.as_deref() {
            Some("ok") => "answered".into(),
            Some("not_probed") => format!("not probed: {}", s(res.reason.clone())),
            Some("init_failed") => format!("init failed: {}", s(res.code.clone())),
            Some("timed_out") => format!("timed out after {} s", s(num(&res.seconds))),
            Some("crashed") => format!("crashed (signal {})", s(num(&res.signal))),
            Some("worker_failed") => "worker failed".into(),
            Some(other) => other.replace('_', " "),
            // A result without its status is of no known shape.
            None => "none".into(),
        })
    });
    b.attr("nvml.status", "NVML", nvml, None);

    let nodes = r
        .snapshot
        .device_nodes
        .as_ref()
        .and_then(|d| d.nodes.as_ref());
    b.list("dev", "Device nodes", nodes.is_some(), None);
    for n in nodes.into_iter().flatten() {
        let Some(path) = n.path.as_deref() else {
            continue;
        };
        let s = |v: &Option<String>| v.clone().unwrap_or_else(|| "?".into());
        // A node the probe did not list is as missing as one it found absent.
        if n.present == Some(false) {
            continue;
        }
        let value = n
            .present
            .map(|_| format!("{} {}:{}", s(&n.mode), s(&n.owner), s(&n.group)));
        let key = b.item(
            "dev",
            format!("dev[{path}]"),
            path.to_string(),
            value,
            None,
            "missing",
        );
        if n.present == Some(true) {
            b.attr(
                &format!("{key}.access"),
                &format!("{path} read/write"),
                n.access.as_ref().and_then(|a| a.read_write).map(yes_no),
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
    nvml: Option<&'a v1::NvmlGpu>,
    driver: Option<&'a v1::DriverGpu>,
    pci: Option<&'a v1::PciDevice>,
}

fn nvml_system(r: &Report) -> Option<&v1::NvmlSystem> {
    let res = r.snapshot.nvml.as_ref()?.as_ref()?.result.as_ref()?;
    match res.status.as_deref()? {
        "ok" => res.system.as_ref(),
        "timed_out" => res.partial.as_ref(),
        _ => None,
    }
}

fn driver_gpus(r: &Report) -> Option<&Vec<v1::DriverGpu>> {
    r.snapshot
        .kernel_module
        .as_ref()?
        .gpus
        .as_ref()?
        .value
        .as_ref()
}

fn pci_devices(r: &Report) -> Option<&Vec<v1::PciDevice>> {
    r.snapshot.pci.as_ref()?.devices.as_ref()?.value.as_ref()
}

/// Whether the report says which GPUs there are: some source answered.
fn gpus_recorded(r: &Report) -> bool {
    nvml_system(r).is_some() || driver_gpus(r).is_some() || pci_devices(r).is_some()
}

fn nvml_index(g: &GpuView<'_>) -> Option<u64> {
    g.nvml?.index
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

/// An NVML answer's value.
fn value<T>(a: &Option<Answer<T>>) -> Option<&T> {
    match a.as_ref()? {
        Answer::Value(v) => Some(v),
        _ => None,
    }
}

fn gpu_views(r: &Report) -> Vec<GpuView<'_>> {
    let mut views: Vec<GpuView<'_>> = Vec::new();
    let nvml_devices = nvml_system(r).and_then(|s| s.devices.as_ref());
    for d in nvml_devices.into_iter().flatten() {
        views.push(GpuView {
            uuid: value(&d.uuid).cloned(),
            bus: value(&d.pci_bus_id).map(|b| sysfs_address(b)),
            name: value(&d.name).cloned(),
            nvml: Some(d),
            driver: None,
            pci: None,
        });
    }
    for g in driver_gpus(r).into_iter().flatten() {
        let uuid = g.uuid.clone();
        let bus = g.bus_id.as_deref().map(sysfs_address);
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
                name: g.model.clone(),
                nvml: None,
                driver: Some(g),
                pci: None,
            }),
        }
    }
    let pci_gpus = pci_devices(r)
        .into_iter()
        .flatten()
        .filter(|d| d.role.as_deref() == Some("gpu"));
    for d in pci_gpus {
        let bus = d.address.as_deref().map(sysfs_address);
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
    r: &Report,
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
            nvml_facts(b, d, &key, &sub);
        }
        if let Some(d) = g.driver {
            let scope = format!("{key}.driver");
            b.scope(&scope, Some(&key));
            b.attr(
                &format!("{key}.vbios"),
                &sub("VBIOS"),
                seen_text(&d.video_bios),
                Some(&scope),
            );
        }
        if let Some(d) = g.pci {
            let scope = format!("{key}.pci");
            b.scope(&scope, Some(&key));
            b.attr(
                &format!("{key}.bound_driver"),
                &sub("bound to driver"),
                seen_text(&d.driver),
                Some(&scope),
            );
        }
    }
}

/// What NVML says of one GPU, under the GPU's `key`.
fn nvml_facts(b: &mut Builder, d: &v1::NvmlGpu, key: &str, sub: &dyn Fn(&str) -> String) {
    let scope = format!("{key}.nvml");
    b.scope(&scope, Some(key));
    let p = Some(scope.as_str());
    let mut put = |suffix: &str, what: &str, value: Option<String>| {
        b.attr(&format!("{key}.{suffix}"), &sub(what), value, p);
    };
    put("name", "name", field(d.name.as_ref()));
    put(
        "bus_id",
        "PCI bus id",
        field_with(d.pci_bus_id.as_ref(), |v| Some(sysfs_address(v))),
    );
    put(
        "memory",
        "memory",
        field_with(d.memory.as_ref(), |m| m.total.map(mib)),
    );
    put(
        "compute_capability",
        "compute capability",
        field(d.compute_capability.as_ref()),
    );
    let pcie = d.pcie.as_ref();
    put(
        "pcie.width",
        "PCIe link width",
        field_with(pcie.and_then(|p| p.width.as_ref()), |w| {
            Some(format!("x{w}"))
        }),
    );
    // The current generation is left out: an idle GPU drops to Gen1 to save power.
    let max_gen = field_with(pcie.and_then(|p| p.max_generation.as_ref()), |g| {
        Some(format!("Gen{g}"))
    });
    let max_width = field_with(pcie.and_then(|p| p.max_width.as_ref()), |w| {
        Some(format!("x{w}"))
    });
    let max = match (max_gen, max_width) {
        (Some(g_), Some(w)) => Some(format!("{g_} {w}")),
        (g_, w) => g_.or(w),
    };
    put("pcie.max", "PCIe maximum link", max);
    put(
        "persistence_mode",
        "persistence mode",
        field_with(d.persistence_mode.as_ref(), on_off),
    );
    put(
        "compute_mode",
        "compute mode",
        field(d.compute_mode.as_ref()),
    );
    let mig = d.mig.as_ref();
    put(
        "mig.mode",
        "MIG mode",
        field_with(mig.and_then(|m| m.enabled.as_ref()), on_off),
    );
    put(
        "mig.instances",
        "MIG instances",
        mig.and_then(|m| m.instances.as_ref())
            .map(|a| a.len().to_string()),
    );
    let ecc = d.ecc.as_ref();
    put(
        "ecc.mode",
        "ECC",
        field_with(ecc.and_then(|e| e.enabled.as_ref()), on_off),
    );
    put(
        "ecc.uncorrected",
        "uncorrectable ECC errors (lifetime)",
        field(ecc.and_then(|e| e.aggregate_uncorrected.as_ref())),
    );
    put(
        "remapped_rows",
        "remapped rows",
        field_with(d.remapped_rows.as_ref(), |v| {
            let n = |x: Option<u64>| x.map_or_else(|| "?".into(), |x| x.to_string());
            let mut s = format!(
                "{} correctable, {} uncorrectable",
                n(v.correctable),
                n(v.uncorrectable)
            );
            if v.pending == Some(true) {
                s.push_str(", remap pending");
            }
            if v.failure == Some(true) {
                s.push_str(", remap failed");
            }
            Some(s)
        }),
    );
    put(
        "retired_pages_pending",
        "page retirement pending",
        field_with(d.retired_pages_pending.as_ref(), |p| Some(yes_no(*p))),
    );
    put(
        "power_limit",
        "power limit",
        field_with(d.power_limit_mw.as_ref(), |mw| {
            Some(format!("{} W", mw / 1000))
        }),
    );
    put(
        "nvlinks",
        "NVLinks up",
        field_with(d.nvlinks.as_ref(), |links| {
            let up = links.iter().filter(|l| **l).count();
            Some(format!("{up} of {}", links.len()))
        }),
    );
    put(
        "fabric",
        "fabric",
        field_with(d.fabric.as_ref(), |f| {
            let state = f.state.clone().unwrap_or_default();
            Some(match &f.status {
                Some(s) => format!("{state} ({s})"),
                None => state,
            })
        }),
    );
    put(
        "recovery_action",
        "recovery action",
        field(d.recovery_action.as_ref()),
    );
    put(
        "handle",
        "NVML handle",
        seen_with(&d.handle_error, "ok", |e| Some(format!("error: {e}"))),
    );
}

fn toolkits(b: &mut Builder, r: &Report) {
    let in_use = r.derived.as_ref().and_then(|d| {
        seen_with(&d.toolkit_in_use, "none", |t| {
            let root = seen_text(&t.root).unwrap_or_default();
            Some(match &t.cuda {
                Some(c) => format!("{root} (CUDA {c})"),
                None => root,
            })
        })
    });
    b.attr("toolkits.in_use", "Toolkit builds use", in_use, None);
    let t = r.snapshot.toolkits.as_ref();
    b.attr(
        "toolkits.cuda_home",
        "CUDA_HOME resolves to",
        t.and_then(|t| t.cuda_home.as_ref())
            .and_then(|h| seen_with(&h.path, "nothing", |p| Some(p.clone()))),
        None,
    );
    b.attr(
        "toolkits.nvcc",
        "nvcc on PATH",
        t.and_then(|t| {
            seen_with(&t.nvcc_on_path, "none", |n| {
                Some(n.resolved.clone().or(n.path.clone()).unwrap_or_default())
            })
        }),
        None,
    );
    b.attr(
        "toolkits.usr_local_cuda",
        "/usr/local/cuda points to",
        t.and_then(|t| seen_text(&t.usr_local_cuda)),
        None,
    );
    let installs = t.and_then(|t| t.installs.as_ref());
    b.list("toolkit", "CUDA toolkits", installs.is_some(), None);
    for tk in installs.into_iter().flatten() {
        let Some(root) = tk.root.as_deref() else {
            continue;
        };
        b.item(
            "toolkit",
            format!("toolkit[{root}]"),
            format!("CUDA toolkit {root}"),
            fact(&tk.version),
            None,
            "not installed",
        );
    }
    let conda = t.and_then(|t| t.conda_packages.as_ref());
    b.list("conda", "conda CUDA packages", conda.is_some(), None);
    for p in conda.into_iter().flatten() {
        let Some(name) = p.name.as_deref() else {
            continue;
        };
        b.item(
            "conda",
            format!("conda[{name}]"),
            format!("conda package {name}"),
            seen_text(&p.version),
            None,
            "not installed",
        );
    }
}

/// The file the loader picks for each library soname.
fn libraries(b: &mut Builder, r: &Report) {
    let libs = r
        .snapshot
        .libraries
        .as_ref()
        .and_then(|l| l.libraries.as_ref());
    b.list("lib", "Libraries", libs.is_some(), None);
    for lib in libs.into_iter().flatten() {
        let Some(soname) = lib.soname.as_deref() else {
            continue;
        };
        let family = lib.family.as_deref().unwrap_or("");
        let winner = lib
            .winner
            .and_then(|i| lib.candidates.as_ref()?.get(usize::try_from(i).ok()?));
        // Not found is as absent as not looked for (the libraries looked for follow the
        // toolkits and torch found).
        let Some(c) = winner else {
            continue;
        };
        let file = c.target.clone().or(c.path.clone()).unwrap_or_default();
        let value = match &c.version {
            Some(v) => format!("{v} ({file})"),
            None => file,
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

fn python(b: &mut Builder, r: &Report, ctx: &Context) {
    let envs = r.snapshot.python.as_ref();
    b.list("python", "Python environments", envs.is_some(), None);
    for env in envs.into_iter().flatten() {
        let Some(site) = env.site.as_deref() else {
            continue;
        };
        let in_env = |what: &str| {
            if ctx.multi_env {
                format!("{what} in {site}")
            } else {
                what.to_string()
            }
        };
        let summary = match env.python.as_ref().and_then(Option::as_ref) {
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
            seen_text(&env.python),
            Some(&key),
        );

        let torch_list = format!("{key}.torch");
        b.list(
            &torch_list,
            &in_env("torch"),
            env.torch.is_some(),
            Some(&key),
        );
        if let Some(Some(t)) = &env.torch {
            let version = fact(&t.version)
                .filter(|v| !v.starts_with("missing"))
                .or_else(|| seen_text(&t.dist_version));
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
                seen_with(&t.cuda, "none (CPU or ROCm build)", |c| Some(c.clone())),
                Some(&tkey),
            );
            b.attr(
                &format!("{tkey}.arches"),
                &in_env("torch GPU architectures"),
                fact_with(&t.arches, |a| {
                    seen_with(&a.arch_list, "none", |l| Some(joined(l)))
                }),
                Some(&tkey),
            );
        }

        for (dists, field, one, what) in [
            (
                &env.nvidia_wheels,
                "nvidia_wheels",
                "wheel",
                "NVIDIA wheels",
            ),
            (
                &env.companions,
                "companions",
                "companion",
                "torch companions",
            ),
            (
                &env.frameworks,
                "frameworks",
                "framework",
                "other GPU frameworks",
            ),
        ] {
            let list = format!("{key}.{field}");
            b.list(&list, &in_env(what), dists.is_some(), Some(&key));
            for d in dists.iter().flatten() {
                let Some(name) = d.name.as_deref() else {
                    continue;
                };
                b.item(
                    &list,
                    format!("{key}.{one}[{name}]"),
                    in_env(name),
                    seen_text(&d.version),
                    None,
                    "not installed",
                );
            }
        }
    }
    let live = r
        .snapshot
        .python_live
        .as_ref()
        .and_then(|l| l.result.as_ref())
        .filter(|res| res.status.as_deref() == Some("ok"))
        .and_then(|res| res.answer.as_ref())
        .and_then(|a| seen_with(&a.is_available, "none", |x| Some(yes_no(*x))));
    b.attr(
        "python.is_available",
        "torch.cuda.is_available()",
        live,
        None,
    );
}

/// Variables that steer CUDA, PyTorch, NCCL and containers (not gpudoctor's own).
fn environment(b: &mut Builder, r: &Report) {
    let vars = r
        .snapshot
        .environment
        .as_ref()
        .and_then(|e| e.view.variables.as_ref());
    b.list("env", "Environment variables", vars.is_some(), None);
    for v in vars.into_iter().flatten() {
        let Some(name) = v.name.as_deref() else {
            continue;
        };
        if v.category.as_deref() == Some("tool") {
            continue;
        }
        b.item(
            "env",
            format!("env[{name}]"),
            name.to_string(),
            seen_text(&v.value),
            None,
            "unset",
        );
    }
}
