//! The Slurm recipe, run for real: a one-node Slurm cluster on localhost
//! (`.ci/slurm-localhost`, Debian's slurm-wlm and munge), `srun gpudoctor check --format
//! json --output DIR/{host}.json`, then `gpudoctor fleet DIR`. `.ci/run` installs Slurm and
//! sets GPUDOCTOR_SLURM=1; without it the test says it was skipped.

mod util;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use util::*;

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/slurm-localhost")
}

/// Stops the cluster however the test ends.
struct Cluster {
    state: PathBuf,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(script())
            .arg("stop")
            .env("GPUDOCTOR_SLURM_DIR", &self.state)
            .status();
    }
}

#[test]
fn the_slurm_recipe_runs_under_srun_and_fleet_reads_it() {
    if std::env::var_os("GPUDOCTOR_SLURM").is_none() {
        eprintln!("GPUDOCTOR_SLURM unset: needs root, slurm-wlm and munge (.ci/run installs them); skipped");
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let state = work.path().join("slurm");
    let cluster = Cluster {
        state: state.clone(),
    };
    let start = Command::new(script())
        .arg("start")
        .env("GPUDOCTOR_SLURM_DIR", &cluster.state)
        .output()
        .expect("run .ci/slurm-localhost");
    assert!(
        start.status.success(),
        "{}{}",
        String::from_utf8_lossy(&start.stdout),
        String::from_utf8_lossy(&start.stderr)
    );
    // The recipe in docs/fleet.md, on the one node this cluster has (tests/docs.rs checks that
    // the recipe's gpudoctor lines are these).
    let reports = work.path().join("reports");
    let bin = assert_cmd::cargo::cargo_bin("gpudoctor");
    let out = Command::new(script())
        .args(["run", "--"])
        .arg(&bin)
        .args(["check", "--format", "json", "--output"])
        .arg(reports.join("{host}.json"))
        .env("GPUDOCTOR_SLURM_DIR", &state)
        .output()
        .expect("srun");
    let stdout = String::from_utf8_lossy(&out.stdout);
    // check prints the human report through srun; its exit code is the report's.
    assert!(
        stdout.contains("gpudoctor"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let files: Vec<PathBuf> = std::fs::read_dir(&reports)
        .expect("reports written")
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    let node = &v["snapshot"]["node"];
    let slurm = &node["slurm"];
    assert!(
        slurm["job_id"].as_str().is_some_and(|j| !j.is_empty()),
        "{node:#}"
    );
    assert_eq!(slurm["proc_id"], "0", "{node:#}");
    let nodename = slurm["node_name"]
        .as_str()
        .expect("SLURMD_NODENAME arrived");
    assert_eq!(node["name"], nodename);
    assert_eq!(
        files[0].file_name().unwrap().to_string_lossy(),
        format!("{nodename}.json")
    );
    // And the aggregation reads it back with the Slurm job.
    let (_, fleet) = json(gpudoctor().arg("fleet").arg(&reports));
    assert_eq!(fleet["shape"]["nodes"], 1);
    assert_eq!(fleet["nodes"][0]["name"], nodename);
    assert_eq!(fleet["nodes"][0]["slurm_job"], slurm["job_id"]);
    // The fleet's HTML page over the same report: the node in the heat map, the same verdict.
    let page = run(gpudoctor()
        .args(["fleet", "--format", "html"])
        .arg(&reports));
    assert!(
        page.stdout.starts_with("<!DOCTYPE html>"),
        "{}",
        page.stderr
    );
    assert!(
        page.stdout.contains(&format!(">{nodename}<")),
        "the node's row"
    );
    assert!(page
        .stdout
        .contains(&format!("1 node, {} GPU", fleet["shape"]["gpus"])));
    drop(cluster);
}
