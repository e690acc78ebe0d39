//! Every sourced row of the compatibility tables in one list, and the tables as JSON for
//! `gpudoctor __compat-tables` (read by `.ci/compat-refresh` and the tests that check the
//! rows against PyPI). A row is unconfirmed when its source says `UNCONFIRMED` or is
//! secondary (press coverage, not NVIDIA or the package itself).

use serde::Serialize;
use serde_json::{json, Value};

#[derive(Debug, Clone, Serialize)]
pub struct SourcedRow {
    pub table: &'static str,
    pub row: String,
    pub source: String,
}

impl SourcedRow {
    pub fn confirmed(&self) -> bool {
        is_confirmed(&self.source)
    }
}

pub fn is_confirmed(source: &str) -> bool {
    !source.contains("UNCONFIRMED") && !source.starts_with("secondary")
}

pub fn rows() -> Vec<SourcedRow> {
    let mut out = Vec::new();
    let mut push = |table: &'static str, row: String, source: &str| {
        out.push(SourcedRow {
            table,
            row,
            source: source.to_string(),
        })
    };
    for b in super::torch::BUILDS {
        push(
            "torch builds",
            format!("{} {} {}", b.release, b.variant, b.platform.as_str()),
            b.source,
        );
    }
    for c in super::companions::RELEASES {
        push(
            "torch companions",
            format!("{} {}", c.package, c.version),
            &c.source(),
        );
    }
    for r in super::arch::ARCHITECTURES {
        push("architectures", format!("{} {}", r.cc, r.arch), r.source);
    }
    super::arch::sourced_rows(&mut push);
    for c in super::pci_ids::CHIPS {
        push("PCI chips", c.chip.to_string(), c.source);
    }
    for c in super::capabilities::CAPABILITIES {
        push("capabilities", c.key.to_string(), c.source);
    }
    for r in super::driver::TOOLKIT_DRIVERS {
        push("toolkit drivers", r.toolkit.to_string(), r.source);
    }
    for f in super::driver::FAMILY_MINIMUMS {
        push("family minimums", format!("CUDA {}.x", f.major), f.source);
    }
    for b in super::driver::DRIVER_BRANCHES {
        push("driver branches", format!("R{}", b.branch), b.source);
    }
    for p in super::torch_pythons::TORCH_PYTHONS {
        push("torch pythons", p.release.to_string(), p.source);
    }
    for (name, releases) in super::packages::tables() {
        for r in releases {
            let platforms: Vec<&str> = r.platforms.iter().map(|p| p.as_str()).collect();
            push(
                name,
                format!("{} {}", r.requirement, platforms.join("/")),
                r.source,
            );
        }
    }
    push(
        "container toolkit",
        "nvidia-ctk cdi generate".into(),
        super::container_toolkit::CDI_GENERATE_SOURCE,
    );
    for a in super::container_toolkit::ADVISORIES {
        push("container toolkit", a.cves.join(" "), a.source);
    }
    for e in super::cuda_errors::CU_RESULTS {
        push("CUresult", e.name.to_string(), e.source);
    }
    for x in super::xid::XIDS {
        push("Xid", format!("Xid {} {}", x.code, x.name), x.source);
    }
    push(
        "Xid",
        format!(
            "Xid {} GPU recovery action",
            super::xid::RECOVERY_ACTION_XID
        ),
        super::xid::RECOVERY_ACTION_SOURCE,
    );
    out
}

/// The tables a script compares with their primary sources.
pub fn tables_json() -> Value {
    let builds: Vec<Value> = super::torch::BUILDS
        .iter()
        .map(|b| {
            json!({
                "release": b.release,
                "variant": b.variant,
                "platform": b.platform.as_str(),
                "sass": b.sass,
                "ptx": b.ptx,
                "source": b.source,
                "confirmed": b.confirmed(),
            })
        })
        .collect();
    let companions: Vec<Value> = super::companions::RELEASES
        .iter()
        .map(|c| {
            json!({
                "package": c.package,
                "version": c.version,
                "requires_torch": c.requires_torch,
                "abi": if c.stable_abi { "stable" } else { "locked" },
            })
        })
        .collect();
    // What the tables and the fixes built from them name on PyPI: every torch release of
    // the torch table and every companion release.
    let mut on_pypi: Vec<(&str, &str)> = super::torch::BUILDS
        .iter()
        .map(|b| ("torch", b.release))
        .chain(
            super::companions::RELEASES
                .iter()
                .map(|c| (c.package, c.version)),
        )
        .collect();
    on_pypi.sort();
    on_pypi.dedup();
    let packages: Vec<&super::packages::PackageRelease> = super::packages::tables()
        .iter()
        .flat_map(|(_, rows)| rows.iter())
        .collect();
    let rows = rows();
    json!({
        "packages": packages,
        "torch_builds": builds,
        "companions": companions,
        "compiler_targets": super::arch::verified_target_lists(),
        "names_on_pypi": on_pypi,
        "rows": rows.iter().map(|r| json!({
            "table": r.table,
            "row": r.row,
            "source": r.source,
            "confirmed": r.confirmed(),
        })).collect::<Vec<_>>(),
    })
}
