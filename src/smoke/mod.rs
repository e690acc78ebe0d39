//! The on-device smoke test: matmul correctness, a memory-allocation probe and transfer
//! bandwidth, run by `gpudoctor __smoke-worker` (worker.rs) through the driver API
//! (driver.rs) on PTX kernels embedded in the binary (kernels.cu → kernels.ptx).
//! This file holds the host-side arithmetic both sides agree on.

pub mod driver;
pub mod nccl;
mod peer;
pub mod progress;
pub mod protocol;
pub mod worker;

/// The kernels, PTX ISA 6.0 for sm_50: every driver from R384 (CUDA 9.0) on can JIT them
/// for any GPU from Maxwell on. Regenerate with src/smoke/gen-ptx.py.
pub const KERNELS_PTX: &str = concat!(include_str!("kernels.ptx"), "\0");

/// The most GPUs one smoke run tests: a driver answering a larger cuDeviceGetCount (or a
/// negative one) is wrong, and one thread per ordinal must not exhaust the host.
pub const MAX_DEVICES: i32 = 128;

/// The CUDA ordinals a run tests: `device` when CUDA has it, else every one up to
/// MAX_DEVICES.
pub fn ordinals(device: Option<u32>, count: Option<i32>) -> Vec<u32> {
    let n = count.unwrap_or(0).clamp(0, MAX_DEVICES) as u32;
    match device {
        Some(d) if d < n => vec![d],
        Some(_) => Vec::new(),
        None => (0..n).collect(),
    }
}

/// Seed of the matmul inputs ("gpudocto"), fixed so every run checks the same product.
pub const MATMUL_SEED: u64 = 0x6770_7564_6f63_746f;

/// xorshift64*: deterministic inputs without a dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [-1, 1).
    pub fn next_f32(&mut self) -> f32 {
        ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }
}

/// The two n×n row-major inputs of the matmul check.
pub fn matmul_inputs(n: usize) -> (Vec<f32>, Vec<f32>) {
    let mut rng = Rng::new(MATMUL_SEED);
    let a = (0..n * n).map(|_| rng.next_f32()).collect();
    let b = (0..n * n).map(|_| rng.next_f32()).collect();
    (a, b)
}

/// How a GPU product compares with the CPU's.
#[derive(Debug, Clone, PartialEq)]
pub struct MatmulCheck {
    /// Rows compared element by element with an f64 reference.
    pub checked_rows: usize,
    /// Elements in those rows outside the tolerance.
    pub wrong_elements: usize,
    pub max_abs_error: f64,
    /// The largest error as a fraction of its element's tolerance (≤ 1 passes).
    pub max_error_ratio: f64,
    /// Freivalds' test over the whole matrix (two random ±1 vectors) passed.
    pub freivalds_passed: bool,
}

impl MatmulCheck {
    pub fn correct(&self) -> bool {
        self.wrong_elements == 0 && self.freivalds_passed
    }
}

/// Each FMA of a k-order FP32 dot product rounds its partial sum sₖ by at most u·|sₖ|
/// (u = 2⁻²⁴); with random-signed terms those errors add like a random walk, to about
/// u·√(Σₖ sₖ²) (Higham, "Accuracy and Stability", §3.1 and §2.8, probabilistic bounds).
/// The tolerance allows ten times that. gpudoctor's kernel sums in k order with FMA,
/// exactly like the CPU loop the unit tests run, whose largest error over every checked
/// element stays under 0.21 of the tolerance from n = 16 to n = 1536.
const TOLERANCE_MARGIN: f64 = 10.0;

/// The tolerance, stated once for the report (docs/smoke.md states the same).
pub const MATMUL_TOLERANCE: &str = "|gpu − ref| ≤ 10·2⁻²⁴·√(Σₖ sₖ²) per element (sₖ: the partial sums); Freivalds: |C·r − A·(B·r)|ᵢ ≤ 10·2⁻²⁴·√(n/2)·√(Σₖ aᵢₖ²·‖Bₖ‖₂²) per row";

fn unit() -> f64 {
    TOLERANCE_MARGIN * f64::powi(2.0, -24)
}

/// Compares `c` (from the GPU) with A·B: `rows` evenly spaced rows element by element, and
/// the whole matrix through Freivalds' test, which sees a single element off by more than
/// about 0.005 (0.04 % of a typical element) at n = 1024, less at smaller n, in any row.
pub fn check_matmul(a: &[f32], b: &[f32], c: &[f32], n: usize, rows: usize) -> MatmulCheck {
    let unit = unit();
    let rows = rows.clamp(1, n.max(1));
    let mut picked: Vec<usize> = (0..rows)
        .map(|k| {
            if rows == 1 {
                0
            } else {
                k * (n - 1) / (rows - 1)
            }
        })
        .collect();
    picked.dedup();
    let mut wrong = 0;
    let mut max_abs: f64 = 0.0;
    let mut max_ratio: f64 = 0.0;
    let mut acc = vec![0f64; n];
    // Σₖ sₖ²: the partial sums the kernel rounds, in its order.
    let mut partial_sq = vec![0f64; n];
    for &i in &picked {
        acc.iter_mut().for_each(|x| *x = 0.0);
        partial_sq.iter_mut().for_each(|x| *x = 0.0);
        for k in 0..n {
            let aik = a[i * n + k] as f64;
            let row = &b[k * n..(k + 1) * n];
            for j in 0..n {
                acc[j] += aik * row[j] as f64;
                partial_sq[j] += acc[j] * acc[j];
            }
        }
        for j in 0..n {
            let got = c[i * n + j] as f64;
            let err = (got - acc[j]).abs();
            // NaN (a flipped exponent) is wrong too.
            let tol = unit * partial_sq[j].sqrt() + f64::MIN_POSITIVE;
            let ratio = if err.is_nan() {
                f64::INFINITY
            } else {
                err / tol
            };
            // NaN compares false: a NaN element is wrong.
            if err.is_nan() || err > tol {
                wrong += 1;
            }
            max_abs = max_abs.max(if err.is_nan() { f64::INFINITY } else { err });
            max_ratio = max_ratio.max(ratio);
        }
    }
    let freivalds_passed = (0..2).all(|round| freivalds(a, b, c, n, round));
    MatmulCheck {
        checked_rows: picked.len(),
        wrong_elements: wrong,
        max_abs_error: max_abs,
        max_error_ratio: max_ratio,
        freivalds_passed,
    }
}

/// C·r against A·(B·r) for a random ±1 vector r: O(n²) instead of the O(n³) of a full
/// reference.
fn freivalds(a: &[f32], b: &[f32], c: &[f32], n: usize, round: u64) -> bool {
    let mut rng = Rng::new(MATMUL_SEED ^ (round + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let r: Vec<f64> = (0..n)
        .map(|_| if rng.next_u64() & 1 == 0 { 1.0 } else { -1.0 })
        .collect();
    // Σⱼ m_ij·v_j, or Σⱼ m_ij²·v_j.
    let mat_vec = |m: &[f32], v: &[f64], squared: bool| -> Vec<f64> {
        (0..n)
            .map(|i| {
                m[i * n..(i + 1) * n]
                    .iter()
                    .zip(v)
                    .map(|(&x, &y)| {
                        let x = x as f64;
                        if squared {
                            x * x * y
                        } else {
                            x * y
                        }
                    })
                    .sum()
            })
            .collect()
    };
    let br = mat_vec(b, &r, false);
    let abr = mat_vec(a, &br, false);
    let cr = mat_vec(c, &r, false);
    // Row i of C·r sums n errors eᵢⱼ·rⱼ of random sign: about ‖eᵢ‖₂. Each eᵢⱼ is about
    // u·√(Σₖ sₖ²) (see TOLERANCE_MARGIN), and for random-signed terms Σⱼ Σₖ sₖ² ≈
    // (n/2)·Σₖ aᵢₖ²·‖Bₖ‖₂²: an O(n²) estimate of the row's error norm.
    let b_sq: Vec<f64> = (0..n)
        .map(|k| {
            b[k * n..(k + 1) * n]
                .iter()
                .map(|&x| (x as f64) * (x as f64))
                .sum::<f64>()
        })
        .collect();
    let scale = mat_vec(a, &b_sq, true);
    let unit = unit() * (n as f64 / 2.0).sqrt();
    (0..n).all(|i| {
        let err = (cr[i] - abr[i]).abs();
        err <= unit * scale[i].sqrt() + 1e-30
    })
}

/// PCIe bandwidth per lane per direction in GB/s (10⁹ B/s), after line encoding
/// (8b/10b up to gen 2, 128b/130b for gen 3–5, FLIT for gen 6). PCI-SIG base specs.
pub fn pcie_lane_gbps(generation: u32) -> Option<f64> {
    Some(match generation {
        1 => 0.25,
        2 => 0.5,
        3 => 0.985,
        4 => 1.969,
        5 => 3.938,
        6 => 7.563,
        _ => return None,
    })
}

/// The median of some timings (they are few; a sort is fine).
pub fn median(xs: &mut [f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    let m = xs.len() / 2;
    Some(if xs.len() % 2 == 1 {
        xs[m]
    } else {
        (xs[m - 1] + xs[m]) / 2.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(a: &[f32], b: &[f32], n: usize) -> Vec<f32> {
        let mut c = vec![0f32; n * n];
        for i in 0..n {
            for j in 0..n {
                let mut acc = 0f32;
                for k in 0..n {
                    acc = a[i * n + k].mul_add(b[k * n + j], acc);
                }
                c[i * n + j] = acc;
            }
        }
        c
    }

    #[test]
    fn an_fp32_product_passes_and_a_wrong_element_fails() {
        let n = 96;
        let (a, b) = matmul_inputs(n);
        let c = reference(&a, &b, n);
        let ok = check_matmul(&a, &b, &c, n, 8);
        assert!(ok.correct(), "{ok:?}");
        assert!(ok.max_error_ratio < 1.0);
        // One element off by a visible amount, in a row the exact check does not sample:
        // Freivalds' test catches it.
        let mut bad = c.clone();
        bad[5 * n + 7] += 0.01;
        let r = check_matmul(&a, &b, &bad, n, 8);
        assert!(!r.freivalds_passed && !r.correct(), "{r:?}");
        // A NaN in a sampled row is counted as wrong.
        let mut nan = c;
        nan[0] = f32::NAN;
        let r = check_matmul(&a, &b, &nan, n, 8);
        assert_eq!(r.wrong_elements, 1);
    }

    #[test]
    fn another_summation_order_is_not_called_wrong() {
        // Split-k: 8 partial FP32 sums added at the end, as a differently tiled kernel would.
        let n = 256;
        let (a, b) = matmul_inputs(n);
        let mut c = vec![0f32; n * n];
        for i in 0..n {
            for j in 0..n {
                let mut parts = [0f32; 8];
                for k in 0..n {
                    parts[k % 8] = a[i * n + k].mul_add(b[k * n + j], parts[k % 8]);
                }
                c[i * n + j] = parts.iter().sum();
            }
        }
        let r = check_matmul(&a, &b, &c, n, 64);
        assert!(r.correct(), "{r:?}");
        // A low-order bit flip in one element (a relative 2⁻¹⁰ change) is still seen by the
        // row check when its row is sampled.
        let mut bad = c;
        let x = bad[0];
        bad[0] = f32::from_bits(x.to_bits() ^ (1 << 13));
        assert!(!check_matmul(&a, &b, &bad, n, 64).correct());
    }

    #[test]
    fn the_kernels_own_summation_passes_and_one_small_error_anywhere_fails() {
        // The GPU kernel is exactly this k-order FMA loop: it must pass at every size.
        for n in [16, 100, 256, 512] {
            let (a, b) = matmul_inputs(n);
            let c = reference(&a, &b, n);
            let r = check_matmul(&a, &b, &c, n, 64);
            assert!(r.correct(), "n={n}: {r:?}");
            assert!(r.max_error_ratio < 0.25, "n={n}: margin too thin: {r:?}");
        }
        // One element off by 0.1 % of a typical |c| (7.5 at n = 512), in unsampled rows
        // and anywhere in them: Freivalds' test sees every one.
        let n = 512;
        let (a, b) = matmul_inputs(n);
        let c = reference(&a, &b, n);
        for (i, j) in [
            (5, 7),
            (100, 200),
            (333, 444),
            (500, 1),
            (510, 511),
            (17, 17),
        ] {
            let mut bad = c.clone();
            bad[i * n + j] += 0.0075;
            let r = check_matmul(&a, &b, &bad, n, 64);
            assert!(!r.freivalds_passed, "({i},{j}): {r:?}");
            // 1 % off, wherever 1 % is above the bound (about 0.0016 at n = 512).
            let mut bad = c.clone();
            bad[i * n + j] *= 1.01;
            let caught = !check_matmul(&a, &b, &bad, n, 64).freivalds_passed;
            assert!(caught || c[i * n + j].abs() < 0.2, "({i},{j}) 1 % missed");
        }
    }

    #[test]
    fn the_ptx_holds_the_kernels_and_the_pattern_constants() {
        // The fake libcuda (tests/fake_cuda) re-implements gd_pattern with these constants.
        let ptx = KERNELS_PTX;
        for k in ["gd_matmul_f32", "gd_fill_u32", "gd_verify_u32"] {
            assert!(ptx.contains(&format!(".entry {k}(")), "{k}");
        }
        assert!(ptx.contains(".version 6.0") && ptx.contains(".target sm_50"));
        for c in ["-1640531527", "2146121005", "-2073254261"] {
            // 0x9E3779B9, 0x7feb352d, 0x846ca68b as PTX immediates (signed decimal)
            assert!(ptx.contains(c), "{c} missing from the PTX");
        }
    }

    #[test]
    fn median_and_lanes() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&mut []), None);
        assert_eq!(pcie_lane_gbps(5), Some(3.938));
        assert_eq!(pcie_lane_gbps(0), None);
    }
}
