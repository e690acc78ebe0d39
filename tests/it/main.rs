//! The integration tests, one binary: each module was a test file of its own, and linking the
//! whole crate once instead of once per file is most of the suite's build time and disk.
//! `cargo test --test it MODULE::` runs one module. A test that must be alone in its process
//! (tests/fleet_memory.rs reads the peak RSS of all waited-for children) stays a binary of its own.

#[path = "../util/mod.rs"]
mod util;

mod bad_input;
mod bundle;
mod cli;
mod compat_tables;
mod completions;
mod config;
mod container;
mod container_host;
mod diff;
mod docs;
mod fake_cuda_selftest;
mod fake_nvml_selftest;
mod fatbin;
mod fix_injection;
mod fix_truth;
mod fleet;
mod fleet_regressions;
mod formats;
mod hardware_health;
mod headline;
mod html;
mod image;
mod image_unpack;
mod json_contract;
mod kubernetes;
mod large_host;
mod layering;
mod ldcache;
mod linkage;
mod loader;
mod man;
mod mcp;
mod nccl;
mod nvml;
mod output;
mod packaging;
mod pci_ids;
mod pytorch;
mod real_layouts;
mod real_loader;
mod real_torch;
mod recommend;
mod recommend_pypi;
mod rules;
mod samples;
mod schema;
mod slurm;
mod smoke;
mod smoke_peer;
mod toolkits;
mod topology;
mod verdicts;
mod width;
mod work;
