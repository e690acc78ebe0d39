//! Tests of the fake libnvidia-ml itself, through nvml-wrapper as gpudoctor loads it.
//!
//! Every scenario runs in a child process with its config in GPUDOCTOR_FAKE_NVML
//! (`util::selftest`), so hang and crash faults cannot stall the run.

// Each scenario calls the fake's C ABI as a C caller would, with the API's own contract.
#![allow(clippy::undocumented_unsafe_blocks)]

use std::ffi::c_char;
use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

use crate::util::fake_nvml::*;
use crate::util::selftest::{self, assert_hangs, is_child, run_ok, spawn, MARK};
use nvml_wrapper::enum_wrappers::device::{
    Clock, ComputeMode, EccCounter, MemoryError, P2pCapabilitiesIndex, P2pStatus, RetirementCause,
    TemperatureSensor, TemperatureThreshold, TopologyLevel,
};
use nvml_wrapper::enums::device::{DeviceArchitecture, SampleValue, UsedGpuMemory};
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::structs::device::FieldId;
use nvml_wrapper::{Device, Nvml};
use nvml_wrapper_sys::bindings::{
    nvmlDevice_t, nvmlFieldValue_t, nvmlGpuFabricInfoV_t, nvmlGpuFabricInfo_t,
    nvmlGpuFabricInfo_v2_t, nvmlMemory_t, nvmlMemory_v2_t, nvmlProcessInfo_t, NvmlLib,
};

const MIB: u64 = 1 << 20;

type Cfg<'a> = selftest::Cfg<'a, FakeNvml>;

fn child_config() -> FakeNvml {
    selftest::child_config()
}

fn open() -> Nvml {
    let lib = fake_nvml_lib();
    Nvml::builder()
        .lib_path(lib.as_os_str())
        .init()
        .expect("init the fake")
}

fn open_err() -> NvmlError {
    let lib = fake_nvml_lib();
    match Nvml::builder().lib_path(lib.as_os_str()).init() {
        Ok(_) => panic!("init succeeded"),
        Err(e) => e,
    }
}

/// The raw symbol table, for calls nvml-wrapper does not wrap.
fn raw() -> NvmlLib {
    // SAFETY: loading the fake runs no initialisers that matter.
    unsafe { NvmlLib::new(fake_nvml_lib()) }.expect("dlopen the fake")
}

fn h(d: &Device) -> nvmlDevice_t {
    // SAFETY: the handle is only passed back to the fake.
    unsafe { d.handle() }
}

fn not_supported<T: std::fmt::Debug>(r: Result<T, NvmlError>) {
    assert!(matches!(r, Err(NvmlError::NotSupported)), "{r:?}");
}

fn recovery_action(d: &Device) -> Result<SampleValue, NvmlError> {
    let mut v = d
        .field_values_for(&[FieldId(230)])
        .expect("field values call");
    v.remove(0).expect("sample").value
}

// ---- presets ----

#[test]
fn presets_survive_json() {
    for p in [
        FakeNvml::hgx_h100_8gpu(),
        FakeNvml::consumer_rtx4090(),
        FakeNvml::mig_a100(),
    ] {
        let back: FakeNvml = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
        assert_eq!(back, p);
    }
}

#[test]
fn hgx_h100_roundtrip() {
    let name = "hgx_h100_roundtrip";
    if !is_child(name) {
        run_ok(name, Cfg::Json(&FakeNvml::hgx_h100_8gpu()), &[]);
        return;
    }
    let nvml = open();
    assert_eq!(nvml.sys_driver_version().unwrap(), "580.95.05");
    assert_eq!(nvml.sys_nvml_version().unwrap(), "13.580.95.05");
    assert_eq!(nvml.sys_cuda_driver_version().unwrap(), 13000);
    assert_eq!(nvml.device_count().unwrap(), 8);
    for i in 0..8u32 {
        let d = nvml.device_by_index(i).unwrap();
        assert_eq!(d.index().unwrap(), i);
        assert_eq!(d.name().unwrap(), "NVIDIA H100 80GB HBM3");
        assert_eq!(d.uuid().unwrap(), gpu_uuid(i));
        assert_eq!(d.serial().unwrap(), format!("165422300{i:04}"));
        let pci = d.pci_info().unwrap();
        assert_eq!(pci.bus_id, format!("00000000:{:02X}:00.0", 0x18 + i));
        assert_eq!((pci.domain, pci.bus, pci.device), (0, 0x18 + i, 0));
        assert_eq!(pci.pci_device_id, 0x2330_10DE);
        assert_eq!(d.minor_number().unwrap(), i);
        assert_eq!(d.architecture().unwrap(), DeviceArchitecture::Hopper);
        let cc = d.cuda_compute_capability().unwrap();
        assert_eq!((cc.major, cc.minor), (9, 0));
        let m = d.memory_info().unwrap();
        assert_eq!(
            (m.total, m.used, m.reserved, m.free),
            (81559 * MIB, 4 * MIB, 579 * MIB, (81559 - 583) * MIB)
        );
        assert_eq!(d.bar1_memory_info().unwrap().total, 131072 * MIB);
        assert_eq!(d.current_pcie_link_gen().unwrap(), 5);
        assert_eq!(d.max_pcie_link_gen().unwrap(), 5);
        assert_eq!(d.current_pcie_link_width().unwrap(), 16);
        assert_eq!(d.max_pcie_link_width().unwrap(), 16);
        assert_eq!(d.temperature(TemperatureSensor::Gpu).unwrap(), 34);
        let slow = d.temperature_threshold(TemperatureThreshold::Slowdown);
        assert_eq!(slow.unwrap(), 89);
        let shut = d.temperature_threshold(TemperatureThreshold::Shutdown);
        assert_eq!(shut.unwrap(), 92);
        assert_eq!(d.power_usage().unwrap(), 70_000);
        assert_eq!(d.enforced_power_limit().unwrap(), 700_000);
        assert_eq!(d.clock_info(Clock::SM).unwrap(), 345);
        assert_eq!(d.clock_info(Clock::Graphics).unwrap(), 345);
        assert_eq!(d.clock_info(Clock::Memory).unwrap(), 2619);
        assert_eq!(d.max_clock_info(Clock::SM).unwrap(), 1980);
        assert_eq!(d.max_clock_info(Clock::Memory).unwrap(), 2619);
        assert_eq!(
            d.current_throttle_reasons().unwrap().bits(),
            THROTTLE_GPU_IDLE
        );
        let ecc = d.is_ecc_enabled().unwrap();
        assert!(ecc.currently_enabled && ecc.pending_enabled);
        for e in [MemoryError::Corrected, MemoryError::Uncorrected] {
            for c in [EccCounter::Volatile, EccCounter::Aggregate] {
                assert_eq!(d.total_ecc_errors(e, c).unwrap(), 0);
            }
        }
        not_supported(d.retired_pages(RetirementCause::DoubleBitEccError));
        not_supported(d.are_pages_pending_retired());
        assert!(d.is_in_persistent_mode().unwrap());
        assert_eq!(d.compute_mode().unwrap(), ComputeMode::Default);
        let mig = d.mig_mode().unwrap();
        assert_eq!((mig.current, mig.pending), (0, 0));
        assert_eq!(d.mig_device_count().unwrap(), 0);
        assert!(d.running_compute_processes().unwrap().is_empty());
        assert!(d.running_graphics_processes().unwrap().is_empty());
        for link in 0..18 {
            assert!(d.link_wrapper_for(link).is_active().unwrap());
        }
        let past = d.link_wrapper_for(18).is_active();
        assert!(matches!(past, Err(NvmlError::InvalidArg)), "{past:?}");
        assert!(matches!(recovery_action(&d), Ok(SampleValue::U32(0))));
        // Fabric has no wrapper: the raw call, as gpudoctor makes it.
        let lib = nvml.lib();
        // SAFETY: plain C data, valid handle.
        let mut f: nvmlGpuFabricInfo_t = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { lib.nvmlDeviceGetGpuFabricInfo(h(&d), &mut f) }, 0);
        assert_eq!((f.state, f.status, f.cliqueId), (3, 0, 1));
        assert_eq!(f.clusterUuid[..2], [0x7f, 0x3c]);
        let (mut c, mut u, mut p, mut x) = (9, 9, 9, 9);
        // SAFETY: four valid out-pointers.
        let rc = unsafe { lib.nvmlDeviceGetRemappedRows(h(&d), &mut c, &mut u, &mut p, &mut x) };
        assert_eq!((rc, c, u, p, x), (0, 0, 0, 0, 0));
    }
    let d0 = nvml.device_by_index(0).unwrap();
    let level = |j: u32| d0.topology_common_ancestor(nvml.device_by_index(j).unwrap());
    assert_eq!(level(0).unwrap(), TopologyLevel::Internal);
    assert_eq!(level(3).unwrap(), TopologyLevel::Node);
    assert_eq!(level(4).unwrap(), TopologyLevel::System);
    let d5 = nvml.device_by_index(5).unwrap();
    for cap in [P2pCapabilitiesIndex::Read, P2pCapabilitiesIndex::NvLink] {
        assert_eq!(d0.p2p_status(&d5, cap).unwrap(), P2pStatus::Ok);
    }
    let gone = nvml.device_by_index(8);
    assert!(matches!(gone, Err(NvmlError::InvalidArg)), "{gone:?}");
}

#[test]
fn rtx4090_unsupported_fields() {
    let name = "rtx4090_unsupported_fields";
    if !is_child(name) {
        run_ok(name, Cfg::Json(&FakeNvml::consumer_rtx4090()), &[]);
        return;
    }
    let nvml = open();
    assert_eq!(nvml.device_count().unwrap(), 1);
    let d = nvml.device_by_index(0).unwrap();
    assert_eq!(d.name().unwrap(), "NVIDIA GeForce RTX 4090");
    assert_eq!(d.architecture().unwrap(), DeviceArchitecture::Ada);
    let cc = d.cuda_compute_capability().unwrap();
    assert_eq!((cc.major, cc.minor), (8, 9));
    assert!(!d.is_in_persistent_mode().unwrap());
    not_supported(d.serial());
    not_supported(d.is_ecc_enabled());
    not_supported(d.total_ecc_errors(MemoryError::Uncorrected, EccCounter::Volatile));
    not_supported(d.retired_pages(RetirementCause::MultipleSingleBitEccErrors));
    not_supported(d.mig_mode());
    assert_eq!(d.mig_device_count().unwrap(), 0);
    not_supported(d.link_wrapper_for(0).is_active());
    not_supported(recovery_action(&d));
    let lib = nvml.lib();
    // SAFETY: plain C data, valid handle and pointers.
    unsafe {
        let mut f: nvmlGpuFabricInfo_t = std::mem::zeroed();
        assert_eq!(lib.nvmlDeviceGetGpuFabricInfo(h(&d), &mut f), 3);
        let mut n = 0;
        let rc = lib.nvmlDeviceGetRemappedRows(h(&d), &mut n, &mut n, &mut n, &mut n);
        assert_eq!(rc, 3);
    }
    let same = d.topology_common_ancestor(nvml.device_by_index(0).unwrap());
    assert_eq!(same.unwrap(), TopologyLevel::Internal);
}

#[test]
fn mig_a100_devices() {
    let name = "mig_a100_devices";
    if !is_child(name) {
        run_ok(name, Cfg::Json(&FakeNvml::mig_a100()), &[]);
        return;
    }
    let nvml = open();
    let d = nvml.device_by_index(0).unwrap();
    assert_eq!(d.name().unwrap(), "NVIDIA A100-SXM4-40GB");
    assert_eq!(d.architecture().unwrap(), DeviceArchitecture::Ampere);
    let mode = d.mig_mode().unwrap();
    assert_eq!((mode.current, mode.pending), (1, 1));
    assert!(!d.mig_is_mig_device_handle().unwrap());
    assert_eq!(d.mig_device_count().unwrap(), 7);
    for (slot, gi) in [(0u32, 1u32), (1, 2)] {
        let m = d.mig_device_by_index(slot).unwrap();
        assert!(m.mig_is_mig_device_handle().unwrap());
        assert_eq!(
            m.uuid().unwrap(),
            format!("MIG-5c1d9e2a-7b3f-5a1c-8d4e-{gi:012x}")
        );
        assert_eq!(m.name().unwrap(), "NVIDIA A100-SXM4-40GB MIG 3g.20gb");
        assert_eq!(m.memory_info().unwrap().total, 19968 * MIB);
        assert_eq!(m.mig_parent_device().unwrap().uuid().unwrap(), gpu_uuid(0));
        // A MIG device lists the processes of its own GPU instance.
        let procs = m.running_compute_processes().unwrap();
        assert_eq!(procs.len(), usize::from(gi == 1));
        not_supported(m.pci_info());
    }
    let empty = d.mig_device_by_index(2);
    assert!(matches!(empty, Err(NvmlError::NotFound)), "{empty:?}");
    let past = d.mig_device_by_index(7);
    assert!(matches!(past, Err(NvmlError::InvalidArg)), "{past:?}");
    let procs = d.running_compute_processes().unwrap();
    assert_eq!(procs.len(), 1);
    assert_eq!(procs[0].pid, 4242);
    assert_eq!(procs[0].used_gpu_memory, UsedGpuMemory::Used(1024 * MIB));
    assert_eq!(procs[0].gpu_instance_id, Some(1));
    assert_eq!(procs[0].compute_instance_id, Some(0));
}

/// An HGX with trouble on most GPUs: the values gpudoctor diagnoses.
fn troubled_hgx() -> FakeNvml {
    let mut c = FakeNvml::hgx_h100_8gpu();
    let g = c.gpu(0);
    g.compute_processes = Some(vec![
        Process {
            pid: 100,
            used_memory: Some(70 * 1024 * MIB),
            ..Process::default()
        },
        Process {
            pid: 101,
            used_memory: None,
            ..Process::default()
        },
    ]);
    g.graphics_processes = Some(vec![Process {
        pid: 200,
        used_memory: Some(MIB),
        ..Process::default()
    }]);
    g.throttle_reasons = Some(THROTTLE_HW_SLOWDOWN | THROTTLE_SW_THERMAL);
    g.ecc = Some(Ecc {
        current: true,
        pending: false,
        volatile: Some(EccCounts {
            corrected: 12,
            uncorrected: 1,
        }),
        aggregate: Some(EccCounts {
            corrected: 340,
            uncorrected: 2,
        }),
    });
    g.retired_pages = Some(RetiredPages {
        sbe: vec![0x1000, 0x2000, 0x3000],
        dbe: vec![0xdead000],
        pending: true,
    });
    g.remapped_rows = Some(RemappedRows {
        correctable: 3,
        uncorrectable: 1,
        pending: true,
        failure: false,
    });
    g.recovery_action = Some(4);
    g.nvlinks.as_mut().unwrap()[7] = false;
    g.pcie.as_mut().unwrap().width = 8;
    let g = c.gpu(1);
    g.fabric.as_mut().unwrap().state = FabricState::InProgress;
    g.not_supported = vec!["nvmlDeviceGetPowerUsage".into(), "nvmlDeviceGetName".into()];
    g.temperature_c = None;
    c.gpu(3).lost = true;
    c.topology.pairs.push(TopoPair {
        a: 2,
        b: 0,
        level: Some(TOPOLOGY_SINGLE),
        p2p: Some(4),
    });
    c
}

#[test]
fn troubled_values_roundtrip() {
    let name = "troubled_values_roundtrip";
    if !is_child(name) {
        run_ok(name, Cfg::Json(&troubled_hgx()), &[]);
        return;
    }
    let nvml = open();
    assert_eq!(nvml.device_count().unwrap(), 8);
    let d = nvml.device_by_index(0).unwrap();
    let cp = d.running_compute_processes().unwrap();
    assert_eq!(cp.iter().map(|p| p.pid).collect::<Vec<_>>(), [100, 101]);
    assert_eq!(cp[0].used_gpu_memory, UsedGpuMemory::Used(70 * 1024 * MIB));
    assert_eq!(cp[1].used_gpu_memory, UsedGpuMemory::Unavailable);
    assert_eq!(cp[0].gpu_instance_id, None);
    assert_eq!(d.running_compute_processes_count().unwrap(), 2);
    assert_eq!(d.running_graphics_processes().unwrap()[0].pid, 200);
    assert_eq!(
        d.current_throttle_reasons().unwrap().bits(),
        THROTTLE_HW_SLOWDOWN | THROTTLE_SW_THERMAL
    );
    let count = |e: MemoryError, c: EccCounter| d.total_ecc_errors(e, c).unwrap();
    assert_eq!(count(MemoryError::Corrected, EccCounter::Volatile), 12);
    assert_eq!(count(MemoryError::Uncorrected, EccCounter::Volatile), 1);
    assert_eq!(count(MemoryError::Corrected, EccCounter::Aggregate), 340);
    assert_eq!(count(MemoryError::Uncorrected, EccCounter::Aggregate), 2);
    assert!(!d.is_ecc_enabled().unwrap().pending_enabled);
    let sbe = d
        .retired_pages(RetirementCause::MultipleSingleBitEccErrors)
        .unwrap();
    let addrs: Vec<u64> = sbe.iter().map(|p| p.address).collect();
    assert_eq!(addrs, [0x1000, 0x2000, 0x3000]);
    let dbe = d.retired_pages(RetirementCause::DoubleBitEccError).unwrap();
    assert_eq!(dbe[0].address, 0xdead000);
    assert!(d.are_pages_pending_retired().unwrap());
    let (mut c, mut u, mut p, mut x) = (0, 0, 0, 0);
    // SAFETY: valid handle and out-pointers.
    let rc = unsafe {
        nvml.lib()
            .nvmlDeviceGetRemappedRows(h(&d), &mut c, &mut u, &mut p, &mut x)
    };
    assert_eq!((rc, c, u, p, x), (0, 3, 1, 1, 0));
    assert!(matches!(recovery_action(&d), Ok(SampleValue::U32(4))));
    assert!(!d.link_wrapper_for(7).is_active().unwrap());
    assert!(d.link_wrapper_for(8).is_active().unwrap());
    assert_eq!(d.current_pcie_link_width().unwrap(), 8);

    let d1 = nvml.device_by_index(1).unwrap();
    not_supported(d1.power_usage());
    not_supported(d1.name());
    not_supported(d1.temperature(TemperatureSensor::Gpu));
    assert_eq!(d1.enforced_power_limit().unwrap(), 700_000);
    // SAFETY: plain C data, valid handle.
    let mut f: nvmlGpuFabricInfo_t = unsafe { std::mem::zeroed() };
    assert_eq!(
        unsafe { nvml.lib().nvmlDeviceGetGpuFabricInfo(h(&d1), &mut f) },
        0
    );
    assert_eq!(f.state, 2);

    let lost = nvml.device_by_index(3);
    assert!(matches!(lost, Err(NvmlError::GpuLost)), "{lost:?}");
    let d2 = nvml.device_by_index(2).unwrap();
    let l = d.topology_common_ancestor(nvml.device_by_index(2).unwrap());
    assert_eq!(l.unwrap(), TopologyLevel::Single);
    let s = d2.p2p_status(&d, P2pCapabilitiesIndex::Read).unwrap();
    assert_eq!(s, P2pStatus::DisabledByRegkey);
}

// ---- faults ----

#[test]
fn init_errors_map_to_variants() {
    let name = "init_errors_map_to_variants";
    if is_child(name) {
        let want = child_config().faults.init_error.unwrap();
        let got = open_err();
        let ok = matches!(
            (want, &got),
            (9, NvmlError::DriverNotLoaded)
                | (18, NvmlError::LibRmVersionMismatch)
                | (4, NvmlError::NoPermission)
                | (999, NvmlError::Unknown)
        );
        assert!(ok, "code {want} gave {got:?}");
        return;
    }
    for code in [9, 18, 4, 999] {
        let mut c = FakeNvml::hgx_h100_8gpu();
        c.faults.init_error = Some(code);
        run_ok(name, Cfg::Json(&c), &[]);
    }
}

#[test]
fn bad_config_fails_init_with_a_reason() {
    let name = "bad_config_fails_init_with_a_reason";
    if is_child(name) {
        assert!(matches!(open_err(), NvmlError::Unknown));
        return;
    }
    let out = run_ok(name, Cfg::Unset, &[]);
    assert!(
        out.contains("fake-nvml: GPUDOCTOR_FAKE_NVML is not set"),
        "{out}"
    );
    let dir = tempfile::tempdir().unwrap();
    let out = run_ok(name, Cfg::Path(&dir.path().join("absent.json")), &[]);
    assert!(out.contains("fake-nvml: cannot read"), "{out}");
    let typo = dir.path().join("typo.json");
    std::fs::write(&typo, r#"{"devices": [{"nmae": "x"}]}"#).unwrap();
    let out = run_ok(name, Cfg::Path(&typo), &[]);
    assert!(out.contains("unknown field `nmae`"), "{out}");
    let bad_bus = dir.path().join("bus.json");
    std::fs::write(&bad_bus, r#"{"devices": [{"pci": {"bus_id": "zz"}}]}"#).unwrap();
    let out = run_ok(name, Cfg::Path(&bad_bus), &[]);
    assert!(out.contains("devices[0].pci.bus_id"), "{out}");
}

#[test]
fn missing_symbols_answer_function_not_found() {
    let name = "missing_symbols_answer_function_not_found";
    if !is_child(name) {
        let mut c = FakeNvml::hgx_h100_8gpu();
        c.faults.missing = vec![
            "nvmlDeviceGetMemoryInfo_v2".into(),
            "nvmlDeviceGetRemappedRows".into(),
        ];
        run_ok(name, Cfg::Json(&c), &[]);
        let mut c = FakeNvml::hgx_h100_8gpu();
        c.faults.missing = vec!["nvmlInit_v2".into()];
        run_ok(name, Cfg::Json(&c), &[]);
        return;
    }
    if child_config().faults.missing == ["nvmlInit_v2"] {
        assert!(matches!(open_err(), NvmlError::FunctionNotFound));
        return;
    }
    let nvml = open();
    let d = nvml.device_by_index(0).unwrap();
    let m = d.memory_info();
    assert!(matches!(m, Err(NvmlError::FunctionNotFound)), "{m:?}");
    let mut n = 0;
    // SAFETY: valid handle and out-pointers.
    let rc = unsafe {
        nvml.lib()
            .nvmlDeviceGetRemappedRows(h(&d), &mut n, &mut n, &mut n, &mut n)
    };
    assert_eq!(rc, 13);
    assert_eq!(d.name().unwrap(), "NVIDIA H100 80GB HBM3");
}

#[test]
fn hang_fault_hangs_and_is_bounded() {
    let name = "hang_fault_hangs_and_is_bounded";
    if is_child(name) {
        let sym = child_config().faults.hang_in.unwrap();
        if sym == "nvmlInit_v2" {
            println!("{MARK}");
            let _ = open();
        } else {
            let nvml = open();
            let d = nvml.device_by_index(0).unwrap();
            println!("{MARK}");
            let _ = d.name();
        }
        panic!("{sym} returned");
    }
    for sym in ["nvmlInit_v2", "nvmlDeviceGetName"] {
        let mut c = FakeNvml::consumer_rtx4090();
        c.faults.hang_in = Some(sym.into());
        assert_hangs(spawn(name, Cfg::Json(&c), &[]), sym);
    }
}

#[test]
fn crash_fault_is_a_segfault() {
    let name = "crash_fault_is_a_segfault";
    if is_child(name) {
        let nvml = open();
        let d = nvml.device_by_index(0).unwrap();
        let _ = d.uuid();
        panic!("nvmlDeviceGetUUID returned");
    }
    let mut c = FakeNvml::consumer_rtx4090();
    c.faults.crash_in = Some("nvmlDeviceGetUUID".into());
    let mut r = spawn(name, Cfg::Json(&c), &[]);
    let status = r.wait(Duration::from_secs(60)).expect("child hung");
    assert_eq!(
        status.signal(),
        Some(libc::SIGSEGV),
        "{status:?}:\n{}",
        r.output()
    );
}

// ---- C ABI details nvml-wrapper hides ----

#[test]
fn abi_edges() {
    let name = "abi_edges";
    if !is_child(name) {
        run_ok(name, Cfg::Json(&FakeNvml::mig_a100()), &[]);
        return;
    }
    let lib = raw();
    // SAFETY: the fake's C ABI, called with valid or deliberately bad arguments it checks.
    unsafe {
        let mut n = 0u32;
        assert_eq!(lib.nvmlDeviceGetCount_v2(&mut n), 1, "uninitialised");
        assert_eq!(lib.nvmlInit_v2(), 0);
        assert_eq!(lib.nvmlInitWithFlags(0), 0);
        assert_eq!(lib.nvmlShutdown(), 0);
        assert_eq!(lib.nvmlDeviceGetCount_v2(&mut n), 0, "one init still open");
        assert_eq!(n, 1);

        let mut d: nvmlDevice_t = std::ptr::null_mut();
        assert_eq!(lib.nvmlDeviceGetHandleByIndex_v2(0, &mut d), 0);
        assert!(!d.is_null());
        let mut again: nvmlDevice_t = std::ptr::null_mut();
        lib.nvmlDeviceGetHandleByIndex_v2(0, &mut again);
        assert_eq!(d, again, "handles are stable");

        // Strings: exact fit needs room for the NUL.
        let name = "NVIDIA A100-SXM4-40GB";
        let mut buf = [0x7f as c_char; 64];
        let fit = name.len() as u32;
        assert_eq!(lib.nvmlDeviceGetName(d, buf.as_mut_ptr(), fit), 7);
        assert_eq!(lib.nvmlDeviceGetName(d, buf.as_mut_ptr(), fit + 1), 0);
        let got = std::ffi::CStr::from_ptr(buf.as_ptr()).to_str().unwrap();
        assert_eq!(got, name);
        assert_eq!(lib.nvmlDeviceGetName(d, std::ptr::null_mut(), 64), 2);

        // Garbage and NULL handles.
        let garbage = 0x1234_5678usize as nvmlDevice_t;
        for bad in [std::ptr::null_mut(), garbage] {
            assert_eq!(lib.nvmlDeviceGetName(bad, buf.as_mut_ptr(), 64), 2);
            assert_eq!(lib.nvmlDeviceGetMinorNumber(bad, &mut n), 2);
        }
        let mut dd = 0u32;
        assert_eq!(lib.nvmlDeviceGetMinorNumber(d, std::ptr::null_mut()), 2);
        assert_eq!(lib.nvmlDeviceGetMinorNumber(d, &mut dd), 0);

        // Versioned memory struct.
        let mut mem: nvmlMemory_v2_t = std::mem::zeroed();
        assert_eq!(lib.nvmlDeviceGetMemoryInfo_v2(d, &mut mem), 25);
        mem.version = std::mem::size_of::<nvmlMemory_v2_t>() as u32 | 2 << 24;
        assert_eq!(lib.nvmlDeviceGetMemoryInfo_v2(d, &mut mem), 0);
        assert_eq!((mem.total, mem.reserved), (40960 * MIB, 512 * MIB));
        let mut v1: nvmlMemory_t = std::mem::zeroed();
        assert_eq!(lib.nvmlDeviceGetMemoryInfo(d, &mut v1), 0);
        assert_eq!(v1.used, mem.used + mem.reserved);

        // Two-call process protocol.
        let mut count = 0u32;
        let rc = lib.nvmlDeviceGetComputeRunningProcesses_v3(d, &mut count, std::ptr::null_mut());
        assert_eq!((rc, count), (7, 1));
        let mut infos: [nvmlProcessInfo_t; 2] = std::mem::zeroed();
        count = 2;
        let rc = lib.nvmlDeviceGetComputeRunningProcesses_v3(d, &mut count, infos.as_mut_ptr());
        assert_eq!((rc, count, infos[0].pid), (0, 1, 4242));
        count = 0;
        let rc = lib.nvmlDeviceGetGraphicsRunningProcesses_v3(d, &mut count, std::ptr::null_mut());
        assert_eq!((rc, count), (0, 0));

        // MIG handles differ from the parent and from each other, and map back.
        let (mut m0, mut m1, mut parent) = (d, d, d);
        assert_eq!(lib.nvmlDeviceGetMigDeviceHandleByIndex(d, 0, &mut m0), 0);
        assert_eq!(lib.nvmlDeviceGetMigDeviceHandleByIndex(d, 1, &mut m1), 0);
        assert!(m0 != d && m1 != m0);
        assert_eq!(
            lib.nvmlDeviceGetDeviceHandleFromMigDeviceHandle(m1, &mut parent),
            0
        );
        assert_eq!(parent, d);
        let mut gi = 0;
        assert_eq!(lib.nvmlDeviceGetGpuInstanceId(m1, &mut gi), 0);
        assert_eq!(gi, 2);
        let mut by_uuid: nvmlDevice_t = std::ptr::null_mut();
        let uuid = c"MIG-5c1d9e2a-7b3f-5a1c-8d4e-000000000002";
        assert_eq!(
            lib.nvmlDeviceGetHandleByUUID(uuid.as_ptr(), &mut by_uuid),
            0
        );
        assert_eq!(by_uuid, m1);

        // Field values: unknown ids fail per value, not per call.
        let mut fv: [nvmlFieldValue_t; 2] = std::mem::zeroed();
        fv[0].fieldId = 230;
        fv[1].fieldId = 1;
        assert_eq!(lib.nvmlDeviceGetFieldValues(d, 2, fv.as_mut_ptr()), 0);
        assert_eq!(
            (fv[0].nvmlReturn, fv[0].valueType, fv[0].value.uiVal),
            (0, 1, 0)
        );
        assert_eq!(fv[1].nvmlReturn, 3);

        // Versioned fabric call on a GPU without fabric; its struct versions on one with.
        let mut fab: nvmlGpuFabricInfoV_t = std::mem::zeroed();
        assert_eq!(lib.nvmlDeviceGetGpuFabricInfoV(d, &mut fab), 3);

        let mut s = 0;
        assert_eq!(lib.nvmlSystemGetCudaDriverVersion(&mut s), 0);
        assert_eq!(s, 13000);
        let mut short = [0 as c_char; 4];
        assert_eq!(lib.nvmlSystemGetDriverVersion(short.as_mut_ptr(), 4), 7);
        let err = std::ffi::CStr::from_ptr(lib.nvmlErrorString(15));
        assert_eq!(err.to_str().unwrap(), "GPU is lost");

        assert_eq!(lib.nvmlShutdown(), 0);
        assert_eq!(lib.nvmlShutdown(), 1, "shut down twice");
        assert_eq!(lib.nvmlDeviceGetMinorNumber(d, &mut n), 1, "after shutdown");
    }
}

#[test]
fn fabric_info_v_versions() {
    let name = "fabric_info_v_versions";
    if !is_child(name) {
        run_ok(name, Cfg::Json(&FakeNvml::hgx_h100_8gpu()), &[]);
        return;
    }
    let nvml = open();
    let d = nvml.device_by_index(0).unwrap();
    let lib = nvml.lib();
    // SAFETY: plain C data and a valid handle.
    unsafe {
        let mut v3: nvmlGpuFabricInfoV_t = std::mem::zeroed();
        assert_eq!(lib.nvmlDeviceGetGpuFabricInfoV(h(&d), &mut v3), 25);
        v3.version = std::mem::size_of::<nvmlGpuFabricInfoV_t>() as u32 | 3 << 24;
        assert_eq!(lib.nvmlDeviceGetGpuFabricInfoV(h(&d), &mut v3), 0);
        assert_eq!((v3.state, v3.status, v3.healthSummary), (3, 0, 1));
        let mut v2: nvmlGpuFabricInfo_v2_t = std::mem::zeroed();
        v2.version = std::mem::size_of::<nvmlGpuFabricInfo_v2_t>() as u32 | 2 << 24;
        let rc = lib.nvmlDeviceGetGpuFabricInfoV(h(&d), (&raw mut v2).cast());
        assert_eq!((rc, v2.state, v2.cliqueId), (0, 3, 1));
    }
}

#[test]
fn libnvidia_ml_link_points_at_the_fake() {
    let dir = tempfile::tempdir().unwrap();
    let so = install_libnvidia_ml(dir.path());
    assert_eq!(
        std::fs::canonicalize(so).unwrap(),
        std::fs::canonicalize(fake_nvml_lib()).unwrap()
    );
}
