//! The fuzz targets: one function per input format gpudoctor reads, shared by the libFuzzer
//! binaries (`fuzz_targets/`, nightly) and the stable runner (`stable/src/bin/stable.rs`).
//!
//! Every input runs on a thread with the stack the probes get: `src/probes/mod.rs` starts
//! each probe with `thread::spawn`, so Rust's default 2 MiB. libFuzzer's own 8 MB main
//! stack hides recursion that overflows a probe thread (an 8 KB nested PEP 508 marker did).

use std::hint::black_box;
use std::sync::mpsc;
use std::time::Duration;

use gpudoctor::fuzzing as gd;

/// The stack of a probe thread (`std::thread::spawn`'s default, which the probes use).
pub const PROBE_STACK: usize = 2 * 1024 * 1024;

/// One fuzz target: its name (the libFuzzer binary and the seed directory), the function,
/// and tokens the stable runner's mutations insert.
pub struct Target {
    pub name: &'static str,
    pub run: fn(&[u8]),
    pub dict: &'static [&'static [u8]],
}

pub const TARGETS: &[Target] = &[
    Target {
        name: "ldcache",
        run: ldcache,
        dict: &[
            b"ld.so-1.7.0",
            b"glibc-ld.so.cache1.1",
            b"\x74\x21\xa4\xea",
            b"libcuda.so.1\0",
        ],
    },
    Target {
        name: "elf",
        run: elf,
        dict: &[
            b"\x7fELF",
            b".nv_fatbin\0",
            b".dynamic\0",
            b"\x50\xed\x55\xba",
        ],
    },
    Target {
        name: "fatbin",
        run: fatbin,
        dict: &[
            b"\x50\xed\x55\xba",
            b"\x01\x00\x10\x00",
            b"\x01\x00\x01\x01\x50\x00",
        ],
    },
    Target {
        name: "pep440",
        run: pep440,
        dict: &[
            b"==", b"!=", b"~=", b">=", b"<", b"===", b".*", b"+cu128", b"rc", b".post", b".dev",
            b"!", b",",
        ],
    },
    Target {
        name: "pep508",
        run: pep508,
        dict: &[
            b"(",
            b")",
            b" and ",
            b" or ",
            b"extra == \"cudart\"",
            b"python_version",
            b"platform_machine",
            b"sys_platform",
            b" not in ",
            b"'",
            b"\"",
            b" in ",
        ],
    },
    Target {
        name: "cuda_versions",
        run: cuda_versions,
        dict: &[
            b"sm_",
            b"compute_",
            b"a",
            b"f",
            b".",
            b"#define CUDA_VERSION ",
            b"release ",
            b"\"version\" : ",
            b"CUDA Version ",
        ],
    },
    Target {
        name: "proc",
        run: proc,
        dict: &[
            b"NVRM version:",
            b"Kernel Module",
            b"Open ",
            b"GCC version:",
            b"nvidia ",
            b" Live 0x",
            b"size=",
            b"PRETTY_NAME=",
            b"\n",
        ],
    },
    Target {
        name: "alloc_conf",
        run: alloc_conf,
        dict: &[
            b"expandable_segments:True",
            b"max_split_size_mb:",
            b"roundup_power2_divisions:[",
            b"]",
            b">:",
            b",",
            b":",
            b"backend:cudaMallocAsync",
            b"=",
        ],
    },
    Target {
        name: "dist_metadata",
        run: dist_metadata,
        dict: &[
            b"Requires-Dist: ",
            b"; extra == \"",
            b"Provides-Extra: ",
            b"[",
            b"]",
            b"(",
            b")",
            b"\n",
            b"__version__ = '",
            b".dist-info",
        ],
    },
    Target {
        name: "fix_script",
        run: fix_script,
        dict: &[
            b"$(",
            b"`",
            b"';",
            b"\";",
            b"\\n",
            b"\\u202e",
            b"\"python\":",
            b"\"pci_bus_id\":",
            b"\"site\":",
            b"\"root\":",
        ],
    },
    Target {
        name: "image_layout",
        run: image_layout,
        dict: &[
            b"\"manifests\":",
            b"\"layers\":",
            b"\"digest\":\"sha256:",
            b"\"size\":",
            b"\"platform\":",
            b"\"annotations\":",
            b"\"Config\":",
            b"\"Layers\":",
            b"blobs/sha256/",
            b"application/vnd.oci.image.index.v1+json",
            b"../",
        ],
    },
    Target {
        name: "config",
        run: config,
        dict: &[
            b"[severity]\n",
            b"[smoke]\n",
            b"fail_on = ",
            b"GD012 = \"error\"\n",
            b"\"",
            b"\"\"\"",
            b"=",
            b"\n",
            b"{",
            b"}",
        ],
    },
    Target {
        name: "mcp",
        run: mcp,
        dict: &[
            b"{\"jsonrpc\":\"2.0\",",
            b"\"id\":",
            b"\"method\":",
            b"\"params\":",
            b"\"tools/call\"",
            b"\"initialize\"",
            b"\"arguments\":",
            b"\"name\":\"check\"",
            b"\"resources/read\"",
            b"null",
            b"[",
        ],
    },
    Target {
        name: "saved_report",
        run: saved_report,
        dict: &[
            b"{",
            b"}",
            b"[",
            b"]",
            b"\"schema_version\":",
            b"\"snapshot\":",
            b"\"probes\":",
            b"\"findings\":",
            b"null",
            b"1e999",
            b"18446744073709551616",
        ],
    },
];

/// Runs `target` on `data` on a thread with the probes' stack. A panic there is re-raised
/// here (libFuzzer's hook aborts on it first); a stack overflow aborts the process.
pub fn on_probe_stack(data: &[u8], target: fn(&[u8])) {
    thread_local! {
        static WORKER: std::cell::RefCell<Option<ProbeThread>> = const { std::cell::RefCell::new(None) };
    }
    let outcome = WORKER.with(|w| {
        w.borrow_mut()
            .get_or_insert_with(ProbeThread::new)
            .run(data, target, None)
    });
    if let Outcome::Panic(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

/// How one input ended.
pub enum Outcome {
    Ok,
    Panic(Box<dyn std::any::Any + Send>),
    /// Still running after the timeout (the thread is abandoned).
    Hang,
}

type Job = (Vec<u8>, fn(&[u8]));
type Done = std::thread::Result<()>;

/// One long-lived thread with the probes' stack that runs inputs one at a time: starting
/// a thread per input would cost more than most parsers do.
pub struct ProbeThread {
    jobs: mpsc::Sender<Job>,
    done: mpsc::Receiver<Done>,
}

impl ProbeThread {
    pub fn new() -> ProbeThread {
        let (jobs, job_rx) = mpsc::channel::<Job>();
        let (done_tx, done) = mpsc::channel::<Done>();
        std::thread::Builder::new()
            .name("fuzz-probe".into())
            .stack_size(PROBE_STACK)
            .spawn(move || {
                report_overflow_on_this_thread();
                for (data, target) in job_rx {
                    let result = std::panic::catch_unwind(|| target(&data));
                    if done_tx.send(result).is_err() {
                        return;
                    }
                }
            })
            .expect("spawn the fuzz thread");
        ProbeThread { jobs, done }
    }

    /// Runs `target` on a copy of `data`, waiting at most `timeout` (forever if none).
    pub fn run(&mut self, data: &[u8], target: fn(&[u8]), timeout: Option<Duration>) -> Outcome {
        self.jobs
            .send((data.to_vec(), target))
            .expect("the fuzz thread is alive");
        let result = match timeout {
            Some(t) => match self.done.recv_timeout(t) {
                Ok(r) => r,
                Err(_) => return Outcome::Hang,
            },
            None => self.done.recv().expect("the fuzz thread is alive"),
        };
        match result {
            Ok(()) => Outcome::Ok,
            Err(panic) => Outcome::Panic(panic),
        }
    }
}

/// A stack overflow must end as a reported crash with its input saved, not a silent
/// SIGSEGV. Under libFuzzer (whose C `main` skips Rust's runtime set-up) this thread has
/// no alternate signal stack and libFuzzer's SIGSEGV handler lacks SA_ONSTACK, so the
/// handler would fault on the exhausted stack: give the thread an alternate stack and
/// the installed SIGSEGV/SIGBUS handlers SA_ONSTACK. (Under the stable runner Rust's own
/// overflow handler has both already; nothing changes.)
fn report_overflow_on_this_thread() {
    const ALT_STACK: usize = 256 * 1024;
    // SAFETY: plain libc calls on this thread's own signal stack and the process's
    // handlers; the alternate stack is leaked, as it must outlive the thread's last signal.
    unsafe {
        let mut current: libc::stack_t = std::mem::zeroed();
        if libc::sigaltstack(std::ptr::null(), &mut current) == 0
            && current.ss_flags & libc::SS_DISABLE != 0
        {
            let stack = Box::leak(vec![0u8; ALT_STACK].into_boxed_slice());
            let alt = libc::stack_t {
                ss_sp: stack.as_mut_ptr().cast(),
                ss_flags: 0,
                ss_size: ALT_STACK,
            };
            libc::sigaltstack(&alt, std::ptr::null_mut());
        }
        for signal in [libc::SIGSEGV, libc::SIGBUS] {
            let mut action: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, std::ptr::null(), &mut action) != 0 {
                continue;
            }
            let handler = action.sa_sigaction;
            if handler != libc::SIG_DFL
                && handler != libc::SIG_IGN
                && action.sa_flags & libc::SA_ONSTACK == 0
            {
                action.sa_flags |= libc::SA_ONSTACK;
                libc::sigaction(signal, &action, std::ptr::null_mut());
            }
        }
    }
}

impl Default for ProbeThread {
    fn default() -> Self {
        ProbeThread::new()
    }
}

/// The largest input a mutation makes (a larger seed is kept whole).
pub const MAX_LEN: usize = 64 << 10;

/// xorshift64*: the same mutations on every machine and run.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }
    pub fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
}

const INTERESTING_BYTES: &[u8] = b"\x00\x01\x7f\x80\xff()[]{}\"',:;=.-+_ \n\t09aZ\\";
const INTERESTING_WORDS: &[u64] = &[
    0,
    1,
    0x7f,
    0xff,
    0x7fff,
    0xffff,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_ffff,
    0x1_0000_0000,
    0x7fff_ffff_ffff_ffff,
    u64::MAX,
];

/// One to four stacked mutations of `input` (bytes from `other` for splices): the stable
/// runner's mutations, and the structural ones (long repeats, deep nesting) the libFuzzer
/// targets add to libFuzzer's own.
pub fn mutate(rng: &mut Rng, input: &[u8], other: &[u8], dict: &[&[u8]]) -> Vec<u8> {
    let mut v = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        let len = v.len();
        match rng.below(11) {
            0 if len > 0 => {
                let i = rng.below(len);
                v[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                v[i] = INTERESTING_BYTES[rng.below(INTERESTING_BYTES.len())];
            }
            2 => {
                let i = rng.below(len + 1);
                v.insert(i, rng.next_u64() as u8);
            }
            3 if len > 0 => {
                let i = rng.below(len);
                let n = 1 + rng.below((len - i).min(64));
                v.drain(i..i + n);
            }
            4 if len > 0 => {
                // Copy a chunk elsewhere.
                let i = rng.below(len);
                let n = 1 + rng.below((len - i).min(256));
                let chunk = v[i..i + n].to_vec();
                let at = rng.below(len + 1);
                v.splice(at..at, chunk);
            }
            5 if len > 0 => {
                // Repeat a short chunk many times in place: nesting depth, long runs,
                // quadratic paths.
                let i = rng.below(len);
                let n = 1 + rng.below((len - i).min(16));
                let times = [16, 256, 4096, 12_000][rng.below(4)];
                let chunk = v[i..i + n].repeat(times);
                v.splice(i..i, chunk);
            }
            6 if !other.is_empty() => {
                // Splice: a prefix of this input, a suffix of another.
                let cut = rng.below(len + 1);
                let from = rng.below(other.len());
                v.truncate(cut);
                v.extend_from_slice(&other[from..]);
            }
            7 if !dict.is_empty() => {
                let token = dict[rng.below(dict.len())];
                let at = rng.below(len + 1);
                if rng.chance(8) {
                    // A token repeated (deep nesting of "(" and friends).
                    let times = [64, 1024, 10_000][rng.below(3)];
                    v.splice(at..at, token.repeat(times));
                } else {
                    v.splice(at..at, token.iter().copied());
                }
            }
            8 if len >= 8 => {
                let w = INTERESTING_WORDS[rng.below(INTERESTING_WORDS.len())];
                let width = [1, 2, 4, 8][rng.below(4)];
                let i = rng.below(len - width + 1);
                let bytes = if rng.chance(2) {
                    w.to_le_bytes()
                } else {
                    w.to_be_bytes()
                };
                let bytes = if rng.chance(2) {
                    &bytes[..width]
                } else {
                    &bytes[8 - width..]
                };
                v[i..i + width].copy_from_slice(bytes);
            }
            9 if len > 0 => v.truncate(rng.below(len)),
            10 if len > 0 => {
                // An ASCII digit run changed to a large or odd number.
                let i = rng.below(len);
                let n = [
                    "0",
                    "4294967296",
                    "18446744073709551616",
                    "-1",
                    "999999999999999999999",
                    "00",
                ][rng.below(6)];
                v.splice(i..i + 1.min(len - i), n.bytes());
            }
            _ => {}
        }
    }
    v.truncate(MAX_LEN.max(input.len()));
    v
}

/// libFuzzer's custom mutator for target `name`: one time in ten this crate's mutations
/// (which make the long repeats and deep nesting libFuzzer's rarely reach), otherwise
/// libFuzzer's own (`default`, `libfuzzer_sys::fuzzer_mutate`).
pub fn custom_mutate(
    name: &str,
    data: &mut [u8],
    size: usize,
    max_size: usize,
    seed: u32,
    default: fn(&mut [u8], usize, usize) -> usize,
) -> usize {
    let mut rng = Rng(u64::from(seed).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    if !rng.chance(10) {
        return default(data, size, max_size);
    }
    let dict = TARGETS
        .iter()
        .find(|t| t.name == name)
        .map_or(&[][..], |t| t.dict);
    let mut v = mutate(&mut rng, &data[..size], &[], dict);
    v.truncate(max_size.min(data.len()));
    data[..v.len()].copy_from_slice(&v);
    v.len()
}

fn text(data: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(data)
}

/// At most this many lines or tokens of one input go to the per-line parsers, so a huge
/// input stays one execution, not millions.
const PIECES: usize = 256;

/// `/etc/ld.so.cache` (`src/ldcache.rs`): every format, then the loader's lookup.
pub fn ldcache(data: &[u8]) {
    let Ok(cache) = gpudoctor::ldcache::parse(data) else {
        return;
    };
    let host = gpudoctor::ldcache::host_arch();
    black_box(cache.lookup("libcuda.so.1", host).count());
    for e in cache.entries.iter().take(32) {
        black_box(cache.lookup(&e.soname, e.arch()).count());
    }
}

/// A shared library as the library probes read it: the dynamic section (`src/elf.rs`)
/// and the `.nv_fatbin` section found through the section headers (`src/fatbin.rs`).
/// Both read a file, so the input is written to one first.
pub fn elf(data: &[u8]) {
    let path = std::env::temp_dir().join(format!("gpudoctor-fuzz-elf-{}.so", std::process::id()));
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let fs = gpudoctor::fsys::HostFs::new(None);
    black_box(gd::read_dynamic(&fs, &path)).ok();
    // The loader's symbol reads: undefined symbols with their versions, and lookups
    // through the file's own hash table.
    if let Ok(mut table) = gd::SymbolTable::open(&fs, &path) {
        black_box(table.imports(false)).ok();
        black_box(table.defines("malloc", Some("GLIBC_2.2.5"))).ok();
        black_box(table.defines("_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_jb", None)).ok();
        black_box(table.relocation_order()).ok();
    }
    black_box(gpudoctor::fatbin::scan(&fs, &path)).ok();
    let _ = std::fs::remove_file(&path);
}

/// A `.nv_fatbin` section's payload (`src/fatbin.rs`).
pub fn fatbin(data: &[u8]) {
    black_box(gpudoctor::fatbin::scan_section(data)).ok();
}

/// PEP 440 versions and specifiers (`src/pyversion.rs`): the first line is a version, each
/// further line a version and a specifier to test it against. Comparison must be a total
/// order (sorting with one that is not may panic).
pub fn pep440(data: &[u8]) {
    let text = text(data);
    let mut lines = text.lines().take(PIECES);
    let first = lines.next().unwrap_or("");
    black_box(gd::parse_version(first)).ok();
    for line in lines {
        black_box(gd::parse_version(line)).ok();
        let ab = gd::cmp_versions(first, line);
        let ba = gd::cmp_versions(line, first);
        assert_eq!(
            ab,
            ba.reverse(),
            "cmp_versions({first:?}, {line:?}) is not antisymmetric"
        );
        black_box(gd::satisfies(first, line)).ok();
        black_box(gd::satisfies(line, first)).ok();
    }
}

/// PEP 508 markers (`src/pyversion.rs`), with and without a known Python and extras.
pub fn pep508(data: &[u8]) {
    let marker = text(data);
    let extras = ["cudart".to_string(), "all".to_string()];
    for (python, extras) in [(Some("3.12"), &extras[..]), (None, &[][..])] {
        let env = gd::MarkerEnv::new(python, extras);
        let _ = black_box(gd::marker_holds(&marker, &env));
    }
}

/// CUDA, driver and compute-capability strings (`src/compat/versions.rs`) and the files the
/// toolkit probe reads them from (version.json, version.txt, cuda.h, `nvcc --version`),
/// with library file names (`libcudart.so.12.4.127`).
pub fn cuda_versions(data: &[u8]) {
    let text = text(data);
    if let Some(word) = data.get(..8) {
        let encoded = i64::from_le_bytes(word.try_into().unwrap_or([0; 8]));
        if let Some(v) = gd::CudaVersion::from_encoded(encoded) {
            black_box(v.encoded());
        }
    }
    black_box(gd::parse_version_json(&text));
    black_box(gd::parse_version_txt(&text));
    black_box(gd::parse_define(&text, "CUDA_VERSION"));
    black_box(gd::parse_nvcc_version(&text));
    let pieces = std::iter::once(&*text)
        .chain(text.lines())
        .chain(text.split_whitespace())
        .take(PIECES);
    for s in pieces {
        if let Some(v) = gd::CudaVersion::parse(s) {
            black_box(v.encoded());
        }
        if let Some(d) = gd::DriverVersion::parse(s) {
            black_box((d.branch(), d.as_str(), d.components()));
        }
        if let Some(cc) = gd::ComputeCapability::parse(s) {
            black_box((cc.sm(), cc.compute()));
        }
        if let Some((cc, _)) = gd::ComputeCapability::parse_target(s) {
            black_box((cc.sm(), cc.compute()));
        }
        black_box(gd::soname_major(s));
        black_box(gd::version_from_file_name(s));
    }
}

/// `/proc`, `/etc` and kernel-log texts (`src/probes/kernel_module.rs`,
/// `src/probes/platform.rs`, `src/probes/kernel_log.rs`): the driver's version file,
/// /proc/modules, os-release, tmpfs sizes as /proc/mounts gives them (`size=65536k`), and
/// /dev/kmsg records, syslog lines, journald files and `--since` times. (The /proc/mounts line
/// search itself is inline in the platform probe.)
pub fn proc(data: &[u8]) {
    let text = text(data);
    black_box(gd::parse_nvrm_version(&text));
    black_box(gd::parse_proc_modules(&text));
    black_box(gd::parse_os_release(&text));
    // The kernel log as /dev/kmsg and a syslog file hold it (src/probes/kernel_log.rs), the
    // same bytes as a journald file (src/probes/journal.rs), and as `check --since TIME`.
    black_box(gd::scan_kmsg(&text, false));
    black_box(gd::scan_text_log(&text, true));
    let _ = black_box(gd::scan_journal(data));
    let _ = black_box(gd::LogWindow::since(&text, std::time::UNIX_EPOCH));
    for line in text.lines().take(PIECES) {
        black_box(gd::parse_event(line));
    }
    let sizes = text
        .split(|c: char| c.is_whitespace() || c == ',')
        .map(|o| o.strip_prefix("size=").unwrap_or(o))
        .take(PIECES);
    for s in sizes {
        black_box(gd::parse_size_kib(s));
    }
}

/// `PYTORCH_CUDA_ALLOC_CONF` (`src/rules/alloc_conf.rs`).
pub fn alloc_conf(data: &[u8]) {
    black_box(gd::parse_alloc_conf(&text(data)));
}

/// A dist-info `METADATA` (`src/probes/pytorch.rs`): the requirements with and without
/// extras, plus torch's version.py and dist-info directory names.
pub fn dist_metadata(data: &[u8]) {
    let text = text(data);
    let base = gd::parse_requires(&text, Some("3.12"));
    black_box(gd::parse_requires(&text, None));
    let extras: Vec<String> = base
        .requires
        .iter()
        .flat_map(|r| r.extras.iter().cloned())
        .take(8)
        .chain(["cudart".to_string()])
        .collect();
    black_box(gd::extra_requires(&text, &extras, Some("3.11")));
    black_box(gd::parse_version_py(&text));
    for line in text.lines().take(PIECES) {
        black_box(gd::parse_dist_info(line.trim()));
    }
    black_box(base);
}

/// A saved report: `check --from` (read, judged, rendered in every format) and one
/// `fleet` document.
/// `check --from` then `--fix-script` on a report: no panic in any rule or in the script's
/// rendering, whatever strings the snapshot holds (tests/it/fix_injection.rs runs the scripts).
pub fn fix_script(data: &[u8]) {
    if let Ok((commands, script)) = gd::fix_commands(data) {
        black_box((commands, script));
    }
}

// The blobs every fuzzed layout holds: an empty layer (one tar end-of-archive block), its
// config and a manifest naming both; the input is the layout's index.json (or a `docker
// save` manifest.json) that names them, or not. The digests are the SHA-256 of each.
const IMAGE_LAYER_HEX: &str = "5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef";
const IMAGE_CONFIG_HEX: &str = "322b3d03f3d392e3b9448487fa87a007db4fd708ed1acb44a9bd762894001edd";
const IMAGE_CONFIG: &str = r#"{"architecture":"amd64","os":"linux","config":{"Env":["PATH=/usr/bin"]},"rootfs":{"type":"layers","diff_ids":["sha256:5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef"]}}"#;
const IMAGE_MANIFEST_HEX: &str = "6f3564af2d51a85aae8fb5e5b1311bddcb2e6dc88df34572283e3c2bdaf6377f";
const IMAGE_MANIFEST: &str = r#"{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:322b3d03f3d392e3b9448487fa87a007db4fd708ed1acb44a9bd762894001edd","size":186},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef","size":1024}]}"#;

/// The fuzzed layouts: an OCI layout and a `docker save` directory, made once per process
/// (inputs run one at a time on the fuzz thread, each rewriting its index).
fn image_dirs() -> &'static [std::path::PathBuf; 2] {
    static DIRS: std::sync::OnceLock<[std::path::PathBuf; 2]> = std::sync::OnceLock::new();
    DIRS.get_or_init(|| {
        // Under fuzz/target, which `cargo clean` removes; one per process.
        let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("target/image-layouts")
            .join(std::process::id().to_string());
        ["oci", "docker"].map(|kind| {
            let dir = base.join(kind);
            let blobs = dir.join("blobs/sha256");
            std::fs::create_dir_all(&blobs).expect("fuzz image directory");
            std::fs::write(blobs.join(IMAGE_LAYER_HEX), [0u8; 1024]).unwrap();
            std::fs::write(blobs.join(IMAGE_CONFIG_HEX), IMAGE_CONFIG).unwrap();
            std::fs::write(blobs.join(IMAGE_MANIFEST_HEX), IMAGE_MANIFEST).unwrap();
            std::fs::write(dir.join("oci-layout"), r#"{"imageLayoutVersion":"1.0.0"}"#).unwrap();
            dir
        })
    })
}

/// `check --image` on a layout whose index.json (and, as a `docker save`, manifest.json) is
/// the input: the index, manifest and config readers, platform and reference picking, the
/// bounds, and the layers they lead to.
pub fn image_layout(data: &[u8]) {
    let [oci, docker] = image_dirs();
    let limits = gpudoctor::image::Limits {
        max_unpacked_bytes: 16 << 20,
        allowance: 1 << 20,
        max_json_bytes: 1 << 20,
        ..gpudoctor::image::Limits::default()
    };
    std::fs::write(oci.join("index.json"), data).unwrap();
    std::fs::write(docker.join("manifest.json"), data).unwrap();
    for dir in [oci, docker] {
        black_box(gpudoctor::image::unpack(dir, None, "x86_64", &limits)).ok();
        black_box(gpudoctor::image::unpack(
            dir,
            Some("fuzz:1"),
            "aarch64",
            &limits,
        ))
        .ok();
    }
}

/// One line of `gpudoctor mcp`'s input: every answer is one JSON-RPC 2.0 object (a
/// result or an error carrying the request's id), never a panic.
pub fn mcp(data: &[u8]) {
    if let Some(answer) = gd::mcp_message(data) {
        let v: serde_json::Value = match serde_json::from_str(&answer) {
            Ok(v) => v,
            Err(e) => panic!("the answer is not JSON: {e}: {answer}"),
        };
        assert_eq!(v["jsonrpc"], "2.0", "{answer}");
        assert!(v.get("result").is_some() != v.get("error").is_some(), "{answer}");
    }
}

/// A configuration file as `--config` reads it.
pub fn config(data: &[u8]) {
    black_box(gd::config(data)).ok();
}

pub fn saved_report(data: &[u8]) {
    black_box(gd::check_from(data)).ok();
    black_box(gd::fleet_report(data)).ok();
}
