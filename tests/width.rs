//! Every human view fits the terminal: no line wider than COLUMNS (bar a shell command or a
//! single word that cannot be broken), and wrapping only moves line breaks — the words, in
//! order, are those of the same report rendered unwrapped. Runs the real binary on fake
//! nodes (fake NVML and libcuda) with 1 and 8 GPUs, healthy and broken.

mod util;

use util::gpu_node::GpuNode;
use util::{run, ALICE};

const WIDTHS: [usize; 3] = [80, 120, 200];
/// Wide enough that nothing wraps (the width is clamped to 400).
const UNWRAPPED: usize = 10_000;

/// A node with several problems and long evidence and fixes: a device node alice cannot
/// open, debug variables, a wrong matmul, flipped bits, refused pinned memory.
fn broken(n: u32) -> GpuNode {
    let mut node = GpuNode::new(n);
    node.root.chmod("dev/nvidia0", 0o660);
    node.root.remove("dev/nvidia-uvm");
    let last = n as usize - 1;
    node.cuda().device(last).matmul_wrong = true;
    node.cuda().device(0).bit_flips = 3;
    node.cuda().device(last).host_alloc_error = Some(2);
    node.root.torch_venv(
        "2.6.0+cu126",
        Some("12.6"),
        &["nvidia-cudnn-cu12==9.1.0.70"],
    );
    node
}

fn healthy(n: u32) -> GpuNode {
    GpuNode::new(n)
}

/// `gpudoctor ARGS` on the node at `columns`, plain, stdout as a pipe.
fn render(node: &GpuNode, args: &[&str], columns: usize) -> String {
    let mut cmd = node.cmd();
    cmd.args(args)
        .args(["--color", "never", "--user", ALICE])
        .env("COLUMNS", columns.to_string())
        .env("VIRTUAL_ENV", "/venv")
        .env("CUDA_LAUNCH_BLOCKING", "1")
        .env("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True,garbage_collection_threshold:0.6,max_split_size_mb:128,roundup_power2_divisions:[256:1,512:2,1024:4,>:8]");
    let r = run(&mut cmd);
    assert!(
        r.code == 0 || r.code == 1,
        "{args:?} exited {}: {}",
        r.code,
        r.stderr
    );
    r.stdout
}

#[test]
#[ignore]
fn dump() {
    let node = broken(8);
    for args in [
        &["check"][..],
        &["devices"],
        &["devices", "0"],
        &["smoke"],
        &["toolkit"],
    ] {
        println!("===== {args:?}\n{}", render(&node, args, 80));
    }
}
