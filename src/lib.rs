//! gpudoctor: probes → Snapshot → rules → findings → render.

pub mod cli;
pub mod codes;
pub mod compat;
pub mod elf;
pub mod envvars;
pub mod fact;
pub mod fatbin;
pub mod findings;
pub mod fleet;
pub mod fsys;
pub mod ldcache;
pub mod nvml_worker;
pub mod probes;
pub mod pyversion;
pub mod render;
pub mod report;
pub mod rules;
pub mod runner;
pub mod smoke;
pub mod snapshot;
pub mod subject;
pub mod verdict;
pub mod worker;
