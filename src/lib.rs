//! gpudoctor: probes → Snapshot → rules → findings → render.

pub mod cli;
pub mod codes;
pub(crate) mod compat;
// Until src/cli wires `gpudoctor diff` and `check --baseline`.
pub(crate) mod diff;
pub(crate) mod dynsym;
pub(crate) mod elf;
pub(crate) mod envvars;
pub(crate) mod fact;
pub(crate) mod facts;
pub mod fatbin;
pub(crate) mod findings;
pub(crate) mod fleet;
pub mod fsys;
pub mod gpu_id;
pub mod headline;
pub mod image;
pub mod ldcache;
pub(crate) mod loader;
pub(crate) mod nvml_worker;
pub(crate) mod probes;
pub(crate) mod pyversion;
pub(crate) mod recommend;
pub(crate) mod render;
pub mod report;
pub(crate) mod rules;
pub(crate) mod runner;
pub(crate) mod smoke;
pub(crate) mod snapshot;
pub(crate) mod subject;
/// Hand-built snapshots and assertions for the unit tests.
#[cfg(test)]
pub(crate) mod testing;
pub(crate) mod topology;
pub(crate) mod verdict;
pub(crate) mod worker;

/// The embedded NVIDIA part of pci.ids (src/compat/pci_ids.rs), for tests/it/pci_ids.rs to
/// check against the real file.
#[doc(hidden)]
pub mod pci_ids_table {
    /// The pci.ids `Version:` the table came from.
    pub fn version() -> &'static str {
        crate::compat::pci_ids::table_version()
    }

    /// (device id, name) in the table's order.
    pub fn entries() -> Vec<(u16, &'static str)> {
        crate::compat::pci_ids::entries().collect()
    }
}

/// Reference pages rendered from the code's registries; tests/it/docs.rs keeps `docs/` in step.
#[doc(hidden)]
pub mod docs {
    /// `docs/codes.md`.
    pub fn codes_markdown() -> String {
        crate::render::reference::codes_markdown()
    }

    /// `docs/environment.md`.
    pub fn environment_markdown() -> String {
        crate::render::reference::environment_markdown()
    }
}

/// The parsers the fuzz targets in `fuzz/` drive (not an API: it changes with them).
#[doc(hidden)]
pub mod fuzzing {
    pub use crate::compat::versions::{ComputeCapability, CudaVersion, DriverVersion};
    pub use crate::dynsym::SymbolTable;
    pub use crate::elf::read_dynamic;
    pub use crate::facts::libraries::{soname_major, version_from_file_name};
    pub use crate::facts::python_sites::parse_dist_info;
    pub use crate::probes::journal::scan_bytes as scan_journal;
    pub use crate::probes::kernel_log::{parse_event, scan_kmsg, scan_text_log, LogWindow};
    pub use crate::probes::kernel_module::{parse_nvrm_version, parse_proc_modules};
    pub use crate::probes::platform::{parse_os_release, parse_size_kib};
    pub use crate::probes::pytorch::{extra_requires, parse_requires, parse_version_py};
    pub use crate::probes::toolkits::{
        parse_define, parse_nvcc_version, parse_version_json, parse_version_txt,
    };
    pub use crate::pyversion::{
        cmp_versions, holds, marker_holds, parse_version, satisfies, MarkerEnv, PyVersion,
        VersionError,
    };
    pub use crate::rules::alloc_conf::parse_alloc_conf;

    /// A saved report or bare snapshot read and judged, as `check --from` does.
    fn judged(bytes: &[u8]) -> Result<crate::report::Report, String> {
        let saved = crate::report::parse_saved::<crate::snapshot::Snapshot, serde::de::IgnoredAny>(
            bytes,
            crate::report::Saved::ReportOrSnapshot,
        )
        .map_err(|e| e.to_string())?;
        let (checks, findings) = crate::rules::evaluate(&saved.snapshot, &|_: &str| true);
        Ok(crate::report::Report::new(saved.snapshot, checks, findings))
    }

    /// `check --from`: a saved report or bare snapshot read, judged and rendered in every
    /// format, as the command does. The error is the reader's message.
    pub fn check_from(bytes: &[u8]) -> Result<(), String> {
        use crate::render::{self, Style};
        let report = judged(bytes)?;
        let human = render::human::Options {
            verbose: true,
            style: Style::plain(),
            width: 100,
        };
        for text in [
            render::human::render(&report, &human),
            render::json::render(&report),
            render::markdown::render(&report, true),
            render::junit::render(&report, std::time::SystemTime::now()),
            render::prometheus::render(&report, std::time::SystemTime::now()),
        ] {
            std::hint::black_box(text);
        }
        Ok(())
    }

    /// `check --from` of a saved report or bare snapshot, as `check --fix-script` sees it:
    /// each finding's code with its fix commands, and the fix script. The error is the
    /// reader's message.
    pub fn fix_commands(bytes: &[u8]) -> Result<(Vec<(String, String)>, String), String> {
        let report = judged(bytes)?;
        let commands = report
            .findings
            .iter()
            .flat_map(|f| {
                f.fix
                    .iter()
                    .filter_map(|x| x.command.clone())
                    .map(|c| (f.code.clone(), c))
            })
            .collect();
        Ok((commands, crate::render::fix_script::render(&report)))
    }

    /// A configuration file's text, parsed and checked as `--config` reads it. The error is
    /// the message naming the file and line.
    pub fn config(bytes: &[u8]) -> Result<(), String> {
        let text = String::from_utf8(bytes.to_vec()).map_err(|e| e.to_string())?;
        crate::cli::config::parse(std::path::Path::new("fuzz.toml"), text)
            .map(std::hint::black_box)
            .map(drop)
            .map_err(|e| e.to_string())
    }

    /// One line of `gpudoctor mcp`'s input, answered as the server answers it; a tool call
    /// runs nothing (its run fails at once), so only the protocol is exercised.
    pub fn mcp_message(bytes: &[u8]) -> Option<String> {
        let line = String::from_utf8_lossy(bytes);
        crate::cli::mcp::handle_with(&line, &|_: &[String]| Err("not run".to_string()))
            .map(|v| v.to_string())
    }

    /// `fleet`: one node's report read into fleet's own types.
    pub fn fleet_report(bytes: &[u8]) -> Result<(), String> {
        crate::report::parse_saved::<crate::fleet::SnapshotIn, crate::fleet::FindingIn>(
            bytes,
            crate::report::Saved::Report,
        )
        .map(std::hint::black_box)
        .map(drop)
        .map_err(|e| e.to_string())
    }
}
