//! The data model: everything a probe records and a rule reads. No I/O here, and no
//! imports of probes, rules or renderers (tests/it/layering.rs checks).

pub mod baseline;
pub mod container;
pub mod container_host;
pub mod device_nodes;
pub mod environment;
pub mod identity;
pub mod kernel_log;
pub mod kernel_module;
pub mod libraries;
pub mod linkage;
pub mod nccl;
pub mod node;
pub mod nvml;
pub mod pci;
pub mod platform;
pub mod python_sites;
pub mod pytorch;
pub mod pytorch_live;
pub mod smoke;
pub mod toolkits;
pub mod topology;
