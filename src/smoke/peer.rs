//! The smoke worker's peer step: with two or more GPUs tested, for every ordered pair
//! (from, to): cuDeviceCanAccessPeer, cuCtxEnablePeerAccess from `from`'s primary context to
//! `to`'s, then a timed cuMemcpyPeerAsync of a patterned buffer that `to` verifies. The
//! pairs run one at a time, after every GPU's own steps, so each copy has both GPUs and the
//! links between them to itself, and a hang names exactly one pair. Each driver call is
//! announced first (WorkerLine::PeerStage).

use std::ffi::c_void;
use std::time::Instant;

use cudarc::driver::sys::{CUcontext, CUdevice, CUdeviceptr};

use super::driver::Driver;
use super::median;
use super::worker::{grid, Kernels};
use crate::facts::smoke::{CudaError, PeerBandwidth, PeerCopy, Step, Timing};
use crate::smoke::protocol::WorkerLine;
use crate::worker::AnswerOut;

const MIB: u64 = 1 << 20;
/// The largest peer copy. 56 ordered pairs of 8 GPUs copy 5 × 64 MiB each: about 0.9 s of
/// copying at a PCIe Gen4 pair's ~22 GB/s, under 0.1 s over NVLink (docs/smoke.md).
pub const PEER_MAX_BYTES: u64 = 64 * MIB;
/// Timed copies per pair, after one warm-up.
const REPEATS: usize = 4;
/// The source pattern's seed ("peer").
const SEED: u32 = 0x7065_6572;

/// A GPU whose own steps left it ready for peer copies: its context and the kernels.
pub(super) struct Ready {
    pub ordinal: u32,
    pub dev: CUdevice,
    pub ctx: CUcontext,
    pub kernels: Kernels,
    pub blocks: u32,
    pub bus_id: Option<String>,
}

// SAFETY: the context and function handles are plain driver handles, valid on any thread
// (the driver API is thread-safe); each is used by one thread at a time.
unsafe impl Send for Ready {}

/// The bytes each pair copies: the transfer size, at most PEER_MAX_BYTES, whole words.
pub(super) fn copy_bytes(transfer_bytes: u64) -> u64 {
    (transfer_bytes.min(PEER_MAX_BYTES) / 4 * 4).max(4)
}

/// Runs every ordered pair of `ordinals` (those not in `ready` are skipped, with why).
pub(super) fn run(drv: &Driver, ordinals: &[u32], ready: &[Ready], bytes: u64, out: &AnswerOut) {
    if ordinals.len() < 2 {
        return;
    }
    let find = |o: u32| ready.iter().find(|r| r.ordinal == o);
    for &from in ordinals {
        for &to in ordinals {
            if from == to {
                continue;
            }
            let peer = match (find(from), find(to)) {
                (Some(a), Some(b)) => pair(drv, a, b, bytes, out),
                (a, _) => {
                    let not_ready = if a.is_none() { from } else { to };
                    PeerCopy {
                        from,
                        to,
                        copy: Some(Step::Skipped {
                            reason: format!(
                                "CUDA device {not_ready} has no working context or kernels (see its own steps)"
                            ),
                        }),
                        ..PeerCopy::default()
                    }
                }
            };
            out.emit(&WorkerLine::Peer { peer });
        }
    }
}

fn pair(drv: &Driver, a: &Ready, b: &Ready, bytes: u64, out: &AnswerOut) -> PeerCopy {
    let stage = |call: &str| {
        out.emit(&WorkerLine::PeerStage {
            from: a.ordinal,
            to: b.ordinal,
            call: call.into(),
        })
    };
    let mut p = PeerCopy {
        from: a.ordinal,
        to: b.ordinal,
        from_bus_id: a.bus_id.clone(),
        to_bus_id: b.bus_id.clone(),
        ..PeerCopy::default()
    };
    stage("cuDeviceCanAccessPeer");
    match drv.can_access_peer(a.dev, b.dev) {
        Ok(true) => p.can_access = Some(Step::Ok(true)),
        Ok(false) => {
            // Copies between these GPUs are staged through host memory: nothing to time here.
            p.can_access = Some(Step::Ok(false));
            return p;
        }
        Err(error) => {
            p.can_access = Some(Step::Failed {
                error,
                detail: None,
            });
            return p;
        }
    }
    stage("cuCtxEnablePeerAccess");
    let t = Instant::now();
    let enabled = drv
        .set_current(a.ctx)
        .and_then(|()| drv.enable_peer_access(b.ctx));
    match enabled {
        Ok(()) => p.enable = Some(Step::Ok(Timing { ms: ms(t) })),
        Err(error) => {
            p.enable = Some(Step::Failed {
                error,
                detail: None,
            });
            return p;
        }
    }
    p.copy = Some(copy(drv, a, b, bytes, &stage));
    p
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn arg<T>(v: &mut T) -> *mut c_void {
    (v as *mut T).cast()
}

/// A device allocation of one GPU's context, freed (in that context) when dropped.
struct Buf<'a> {
    drv: &'a Driver,
    ctx: CUcontext,
    ptr: CUdeviceptr,
}

impl<'a> Buf<'a> {
    fn new(drv: &'a Driver, ctx: CUcontext, bytes: u64) -> Result<Buf<'a>, CudaError> {
        drv.set_current(ctx)?;
        Ok(Buf {
            drv,
            ctx,
            ptr: drv.alloc(bytes)?,
        })
    }
}

impl Drop for Buf<'_> {
    fn drop(&mut self) {
        if self.drv.set_current(self.ctx).is_ok() {
            let _ = self.drv.free(self.ptr);
        }
    }
}

/// A stream of the current context, destroyed when dropped.
struct Stream<'a> {
    drv: &'a Driver,
    s: cudarc::driver::sys::CUstream,
}

impl Drop for Stream<'_> {
    fn drop(&mut self) {
        let _ = self.drv.stream_destroy(self.s);
    }
}

fn copy(
    drv: &Driver,
    a: &Ready,
    b: &Ready,
    bytes: u64,
    stage: &dyn Fn(&str),
) -> Step<PeerBandwidth> {
    stage("cuMemAlloc");
    // No room for the buffers is the GPUs' business (the memory step's), not the link's.
    let (src, dst, counter) = match (|| {
        Ok::<_, CudaError>((
            Buf::new(drv, a.ctx, bytes)?,
            Buf::new(drv, b.ctx, bytes)?,
            Buf::new(drv, b.ctx, 8)?,
        ))
    })() {
        Ok(bufs) => bufs,
        Err(e) => {
            return Step::Skipped {
                reason: format!("no memory for two {} MiB copy buffers: {e}", bytes / MIB),
            }
        }
    };
    match timed_copies(drv, a, b, bytes, &src, &dst, &counter, stage) {
        Ok(bw) => Step::Ok(bw),
        Err(Stop::Failed(error)) => Step::Failed {
            error,
            detail: None,
        },
        Err(Stop::Skipped(reason)) => Step::Skipped { reason },
    }
}

/// Words of `buf` (on `gpu`) that differ from the source pattern, counted on that GPU.
fn count_mismatches(
    drv: &Driver,
    gpu: &Ready,
    buf: &Buf,
    counter: &Buf,
    words: u64,
) -> Result<u64, CudaError> {
    drv.set_current(gpu.ctx)?;
    drv.memset_d32(counter.ptr, 0, 2)?;
    let (mut p, mut w, mut seed, mut inv, mut c) = (buf.ptr, words, SEED, 0u32, counter.ptr);
    let mut params = [
        arg(&mut p),
        arg(&mut w),
        arg(&mut seed),
        arg(&mut inv),
        arg(&mut c),
    ];
    // SAFETY: gd_verify_u32(const unsigned*, unsigned long long, unsigned, unsigned,
    // unsigned long long*) on buf's words, counting into `counter`.
    unsafe {
        drv.launch(
            gpu.kernels.verify,
            (grid(words, gpu.blocks), 1),
            (256, 1),
            &mut params,
        )?
    };
    drv.synchronize()?;
    let mut mismatches = 0u64;
    // SAFETY: the counter holds one u64.
    unsafe { drv.dtoh((&mut mismatches as *mut u64).cast(), counter.ptr, 8)? };
    Ok(mismatches)
}

/// Why the timed copies gave no figure: a failed call, or a reason not to judge the copy
/// (reported as skipped).
enum Stop {
    Failed(CudaError),
    Skipped(String),
}

impl From<CudaError> for Stop {
    fn from(e: CudaError) -> Stop {
        Stop::Failed(e)
    }
}

#[allow(clippy::too_many_arguments)]
fn timed_copies(
    drv: &Driver,
    a: &Ready,
    b: &Ready,
    bytes: u64,
    src: &Buf,
    dst: &Buf,
    counter: &Buf,
    stage: &dyn Fn(&str),
) -> Result<PeerBandwidth, Stop> {
    let words = bytes / 4;
    stage("gd_fill_u32");
    drv.set_current(a.ctx)?;
    {
        let (mut p, mut w, mut seed, mut inv) = (src.ptr, words, SEED, 0u32);
        let mut params = [arg(&mut p), arg(&mut w), arg(&mut seed), arg(&mut inv)];
        // SAFETY: gd_fill_u32(unsigned*, unsigned long long, unsigned, unsigned) on src's words.
        unsafe {
            drv.launch(
                a.kernels.fill,
                (grid(words, a.blocks), 1),
                (256, 1),
                &mut params,
            )?
        };
        drv.synchronize()?;
    }
    stage("cuStreamCreate");
    let stream = Stream {
        drv,
        s: drv.stream_create()?,
    };
    stage("cuMemcpyPeerAsync");
    let mut times = Vec::with_capacity(REPEATS);
    for i in 0..=REPEATS {
        let t = Instant::now();
        // SAFETY: dst is b's allocation and src a's, both of `bytes`; the stream is a's.
        unsafe { drv.memcpy_peer_async(dst.ptr, b.ctx, src.ptr, a.ctx, bytes as usize, stream.s)? };
        drv.stream_synchronize(stream.s)?;
        if i > 0 {
            times.push(t.elapsed().as_secs_f64());
        }
    }
    drop(stream);
    stage("gd_verify_u32");
    let mismatches = count_mismatches(drv, b, dst, counter, words)?;
    if mismatches > 0 {
        // A source that already reads back wrong is its GPU's memory fault (the memory
        // step's finding), not the copy's.
        let src_counter = Buf::new(drv, a.ctx, 8)?;
        let at_source = count_mismatches(drv, a, src, &src_counter, words)?;
        if at_source > 0 {
            return Err(Stop::Skipped(format!(
                "the source buffer on CUDA device {} read back {at_source} wrong words before it was copied: that GPU's memory (see its memory step)",
                a.ordinal
            )));
        }
    }
    let secs = median(&mut times).unwrap_or(f64::NAN);
    let gbps = bytes as f64 / secs / 1e9;
    Ok(PeerBandwidth {
        bytes,
        iterations: REPEATS as u32,
        ms: finite(secs * 1e3),
        gbps: finite(gbps),
        mismatches,
        verified: mismatches == 0,
    })
}

/// JSON has no infinity.
fn finite(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        f64::MAX
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_are_whole_words_and_capped() {
        assert_eq!(copy_bytes(4 * MIB), 4 * MIB);
        assert_eq!(copy_bytes(256 * MIB), PEER_MAX_BYTES);
        assert_eq!(copy_bytes(7), 4);
        assert_eq!(copy_bytes(0), 4);
    }
}
