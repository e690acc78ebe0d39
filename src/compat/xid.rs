//! What an Xid number in the kernel log means and what it asks of the operator. Names and
//! actions from NVIDIA's Xid Errors document (r555, docs.nvidia.com/deploy/xid-errors), as
//! quoted in leptonai/gpud's Xid table; the application faults from NVIDIA's Kubernetes
//! device plugin, which does not mark a GPU unhealthy for them. Rows no primary text gives
//! an action for say UNCONFIRMED. A number not listed here is reported as unknown.

/// What the operator has to do, as NVIDIA's document words it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XidAction {
    /// Nothing: the line reports the consequence of another error.
    None,
    /// The program that faulted has to be fixed or restarted; the GPU is fine.
    RestartApp,
    /// The GPU keeps working; reset it when convenient (a pending row remap, a contained
    /// ECC error).
    ResetWhenConvenient,
    /// Reset the GPU (or reboot) before it is used again.
    ResetGpu,
    /// Reboot the node: the GPU is gone until then.
    RebootNode,
    /// Run the field diagnostics; replace the GPU if they fail.
    RunDiagnostics,
}

pub struct XidInfo {
    pub code: u32,
    pub name: &'static str,
    pub action: XidAction,
    /// One of NVIDIA's device plugin's application Xids: a program's fault, not the GPU's.
    pub application: bool,
    pub source: &'static str,
}

const XID_DOC: &str = "https://docs.nvidia.com/deploy/xid-errors/index.html (r555, Sep 2024), as quoted in https://github.com/leptonai/gpud pkg/nvidia-query/xid/xid.go";
const DEVICE_PLUGIN: &str = "https://github.com/NVIDIA/k8s-device-plugin/blob/v0.16.0/internal/rm/health.go (application Xids: the GPU stays healthy); names from NVIDIA Xid Errors r555";
const GSP_ACTION: &str = "UNCONFIRMED: the name is from NVIDIA Xid Errors r555; the action (reset the GPU) from Fire-Flyer AI-HPC (arXiv 2408.14158), not from NVIDIA";
const NVLINK5: &str = "UNCONFIRMED: Xid 144-150 are NVLink errors in NVIDIA's Xid catalog for Hopper and Blackwell; the names and the action (reset the GPU) were not read from it";

const fn row(code: u32, name: &'static str, action: XidAction, source: &'static str) -> XidInfo {
    XidInfo {
        code,
        name,
        action,
        application: false,
        source,
    }
}

const fn app(code: u32, name: &'static str) -> XidInfo {
    XidInfo {
        code,
        name,
        action: XidAction::RestartApp,
        application: true,
        source: DEVICE_PLUGIN,
    }
}

use XidAction::*;

pub static XIDS: &[XidInfo] = &[
    row(8, "GPU stopped processing", RestartApp, XID_DOC),
    row(9, "Driver error programming GPU", ResetGpu, XID_DOC),
    row(12, "Driver error handling GPU exception", ResetGpu, XID_DOC),
    app(13, "Graphics Engine Exception"),
    app(31, "GPU memory page fault"),
    row(
        32,
        "Invalid or corrupted push buffer stream",
        ResetGpu,
        XID_DOC,
    ),
    row(38, "Driver firmware error", ResetGpu, XID_DOC),
    app(43, "GPU stopped processing"),
    row(
        44,
        "Graphics Engine fault during context switch",
        ResetGpu,
        XID_DOC,
    ),
    XidInfo {
        code: 45,
        name: "Preemptive cleanup, due to previous errors",
        action: None,
        application: true,
        source: DEVICE_PLUGIN,
    },
    row(48, "Double Bit ECC Error", ResetGpu, XID_DOC),
    row(
        54,
        "Auxiliary power is not connected to the GPU board",
        RebootNode,
        XID_DOC,
    ),
    row(56, "Display Engine error", ResetGpu, XID_DOC),
    row(
        57,
        "Error programming video memory interface",
        ResetGpu,
        XID_DOC,
    ),
    row(
        58,
        "Unstable video memory interface detected",
        ResetGpu,
        XID_DOC,
    ),
    row(
        61,
        "Internal micro-controller breakpoint/warning",
        ResetGpu,
        XID_DOC,
    ),
    row(62, "Internal micro-controller halt", ResetGpu, XID_DOC),
    row(
        63,
        "ECC page retirement or row remapping recording event",
        ResetWhenConvenient,
        XID_DOC,
    ),
    row(
        64,
        "ECC page retirement or row remapper recording failure",
        ResetGpu,
        XID_DOC,
    ),
    app(68, "NVDEC0 Exception"),
    row(69, "Graphics Engine class error", ResetGpu, XID_DOC),
    row(74, "NVLink Error", ResetGpu, XID_DOC),
    row(79, "GPU has fallen off the bus", RebootNode, XID_DOC),
    row(
        92,
        "High single-bit ECC error rate",
        RunDiagnostics,
        XID_DOC,
    ),
    row(94, "Contained ECC error", ResetWhenConvenient, XID_DOC),
    row(95, "Uncontained ECC error", ResetGpu, XID_DOC),
    row(109, "Context Switch Timeout Error", RestartApp, XID_DOC),
    row(110, "Security Fault Error", RebootNode, XID_DOC),
    row(119, "GSP RPC Timeout", ResetGpu, GSP_ACTION),
    row(120, "GSP Error", ResetGpu, GSP_ACTION),
    row(121, "C2C Link Error", RunDiagnostics, XID_DOC),
    row(123, "SPI PMU RPC Write Failure", ResetGpu, XID_DOC),
    row(137, "NVLink FLA privilege error", RestartApp, XID_DOC),
    row(140, "Unrecovered ECC Error", ResetGpu, XID_DOC),
    row(143, "GPU Initialization Failure", RebootNode, XID_DOC),
    row(144, "NVLink error", ResetGpu, NVLINK5),
    row(145, "NVLink error", ResetGpu, NVLINK5),
    row(146, "NVLink error", ResetGpu, NVLINK5),
    row(147, "NVLink error", ResetGpu, NVLINK5),
    row(148, "NVLink error", ResetGpu, NVLINK5),
    row(149, "NVLink error", ResetGpu, NVLINK5),
    row(150, "NVLink error", ResetGpu, NVLINK5),
];

/// Xid 154 carries the action in its text (`GPU recovery action changed from 0x0 (None) to
/// 0x1 (GPU Reset Required)`); the names are NVML's nvmlDeviceGpuRecoveryAction_t.
pub const RECOVERY_ACTION_XID: u32 = 154;
pub const RECOVERY_ACTION_SOURCE: &str =
    "UNCONFIRMED: Xid 154's wording as NVIDIA's R570+ drivers log it; actions from NVML's nvmlDeviceGpuRecoveryAction_t";

pub fn lookup(code: u32) -> Option<&'static XidInfo> {
    XIDS.iter().find(|x| x.code == code)
}

/// What an Xid 154 line asks for: the words after "to 0xN (" up to ")".
pub fn recovery_action(text: &str) -> Option<&str> {
    let (_, after) = text.rsplit_once(" to 0x")?;
    let (_, named) = after.split_once('(')?;
    let (action, _) = named.split_once(')')?;
    Some(action.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_sorted_and_unique() {
        assert!(XIDS.windows(2).all(|w| w[0].code < w[1].code));
        assert_eq!(lookup(79).unwrap().action, RebootNode);
        assert!(lookup(13).unwrap().application);
        assert!(lookup(1000).is_none());
    }

    #[test]
    fn the_recovery_action_is_read_from_the_text() {
        assert_eq!(
            recovery_action(
                "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)"
            ),
            Some("GPU Reset Required")
        );
        assert_eq!(recovery_action("something else"), Option::None);
    }
}
