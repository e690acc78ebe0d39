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

// The tests name the actions bare.
#[cfg(test)]
use XidAction::*;

// The rows: src/compat/data/xid.toml, compiled by build.rs.
include!(concat!(env!("OUT_DIR"), "/compat/xid.rs"));

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
