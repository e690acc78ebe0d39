//! A fake GPU node the smoke test can run on: a fake root with `n` H100s, the fake NVML and
//! the fake libcuda, agreeing on names, UUIDs, bus ids and the driver's CUDA version (13.0).
//! 64 MiB per GPU keeps the CPU-emulated memory probe quick.

use tempfile::TempDir;

use super::fake_cuda::{self, FakeCuda, FAKE_CUDA_ENV};
use super::fake_nvml::{self, FakeNvml, FAKE_NVML_ENV};
use super::FakeRoot;

const MIB: u64 = 1 << 20;

pub struct GpuNode {
    pub root: FakeRoot,
    pub dir: TempDir,
    pub nvml: FakeNvml,
    /// None: NVML only, nothing for the smoke test to load.
    pub cuda: Option<FakeCuda>,
}

impl GpuNode {
    pub fn new(n: u32) -> GpuNode {
        let mut cuda = FakeCuda::h100(n);
        cuda.driver_version = 13000;
        for d in &mut cuda.devices {
            d.total_memory = 64 * MIB;
        }
        GpuNode {
            cuda: Some(cuda),
            ..GpuNode::nvml_only(n as usize, hgx(n))
        }
    }

    /// `n` GPUs with this NVML and no libcuda.
    pub fn nvml_only(n: usize, nvml: FakeNvml) -> GpuNode {
        GpuNode {
            root: FakeRoot::healthy(n),
            dir: tempfile::tempdir().unwrap(),
            nvml,
            cuda: None,
        }
    }

    /// No GPU pair has peer access, by CUDA's answer and by NVML's: the smoke test's peer
    /// step copies nothing (for tests of other steps with copies too big to repeat 56 times).
    pub fn without_peer_access(&mut self) {
        let n = self.nvml.devices.len() as u32;
        let cuda = self.cuda();
        cuda.peers = (0..n)
            .flat_map(|from| (0..n).map(move |to| (from, to)))
            .filter(|(from, to)| from != to)
            .map(|(from, to)| fake_cuda::PeerPair {
                from,
                to,
                can_access: false,
                ..fake_cuda::PeerPair::default()
            })
            .collect();
        for a in 0..n {
            for b in a + 1..n {
                self.nvml.topology.pairs.push(fake_nvml::TopoPair {
                    a,
                    b,
                    level: None,
                    // NVML_P2P_STATUS_CHIPSET_NOT_SUPPORTED
                    p2p: Some(1),
                });
            }
        }
    }

    /// The fake libcuda's config (for per-test faults).
    pub fn cuda(&mut self) -> &mut FakeCuda {
        self.cuda.as_mut().expect("a node with the fake libcuda")
    }

    /// The command with both fakes; small sizes keep the CPU-emulated kernels quick.
    pub fn cmd(&self) -> assert_cmd::Command {
        self.cmd_with_cuda_lib(&fake_cuda::fake_cuda_lib())
    }

    /// The same, with the fake libcuda given as `cuda_lib` (a path the caller made lead to it).
    pub fn cmd_with_cuda_lib(&self, cuda_lib: &std::path::Path) -> assert_cmd::Command {
        let mut c = self.root.cmd();
        let nvml = self.nvml.write(&self.dir.path().join("nvml"));
        c.arg("--nvml-lib")
            .arg(fake_nvml::fake_nvml_lib())
            .env(FAKE_NVML_ENV, nvml);
        if let Some(cuda) = &self.cuda {
            let cuda = cuda.write(&self.dir.path().join("cuda"));
            c.arg("--cuda-lib")
                .arg(cuda_lib)
                .env(FAKE_CUDA_ENV, cuda)
                .args(["--matmul-size", "48", "--transfer-size", "4"]);
        }
        c
    }
}

/// The fake NVML's HGX preset cut to `n` GPUs.
pub fn hgx(n: u32) -> FakeNvml {
    let mut nvml = FakeNvml::hgx_h100_8gpu();
    nvml.devices.truncate(n as usize);
    nvml.topology.pairs.retain(|p| p.a < n && p.b < n);
    nvml
}
