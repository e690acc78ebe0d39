//! gpudoctor: probes → Snapshot → rules → findings → render.

pub mod cli;
pub mod codes;
pub(crate) mod compat;
pub(crate) mod elf;
pub(crate) mod envvars;
pub(crate) mod fact;
pub mod fatbin;
pub(crate) mod findings;
pub(crate) mod fleet;
pub mod fsys;
pub mod ldcache;
pub(crate) mod nvml_worker;
pub(crate) mod probes;
pub(crate) mod pyversion;
pub(crate) mod render;
pub mod report;
pub(crate) mod rules;
pub(crate) mod runner;
pub(crate) mod smoke;
pub(crate) mod snapshot;
pub(crate) mod subject;
pub(crate) mod verdict;
pub(crate) mod worker;
