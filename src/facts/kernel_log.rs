//! What the `kernel_log` probe (src/probes/kernel_log.rs) records.

use crate::fact::Fact;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct KernelLog {
    /// What was found in the log that was read, or why no log could be read.
    pub scan: Fact<LogScan>,
    /// The sources tried before the one read, and why each was passed over.
    pub passed_over: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LogScan {
    /// The span read: `since boot` (/dev/kmsg, the journal's current boot) or `the file's
    /// last N MiB` of a syslog file, which may hold earlier boots.
    pub span: String,
    /// Records read, those inside the window and those before it.
    pub records: u64,
    /// Records older than the window (`check --since-boot`, `--since TIME`), left out.
    #[serde(default)]
    pub before_window: u64,
    /// Records the window could not date (no time the source gives, or no boot time to add
    /// to kmsg's): kept, so the window may hold older lines.
    #[serde(default)]
    pub undated_in_window: u64,
    /// A bound stopped the read (bytes, records or the deadline): older lines were not seen.
    pub truncated: bool,
    /// Events with the same kind, code and device, counted together.
    pub groups: Vec<EventGroup>,
    /// Events in groups past the bound of groups kept.
    pub events_not_grouped: u64,
    /// The newest matching lines as they were logged (message only, escaped where needed
    /// by the renderers), oldest first.
    pub lines: Vec<LoggedLine>,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// `NVRM: Xid (PCI:…): N, …`
    Xid,
    /// `SXid (PCI:…): N, …` from an NVSwitch.
    Sxid,
    /// `RmInitAdapter failed`: the driver could not initialise the GPU.
    InitFailed,
    /// `GPU has fallen off the bus` outside an Xid line.
    FallenOffBus,
    /// GSP firmware stopped answering (`Timeout waiting for RPC from GSP`).
    GspTimeout,
    /// The GPU needs the open kernel modules (Blackwell and later on the proprietary ones).
    OpenModulesRequired,
    /// `PCIe Bus Error: severity=…` for a device.
    Aer,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EventGroup {
    pub kind: EventKind,
    /// The Xid or SXid number.
    pub code: Option<u32>,
    /// The device as sysfs names it (`0000:1b:00.0`); an Xid names no function, `.0` is
    /// assumed.
    pub device: Option<String>,
    /// What the line says beyond its code: the AER severity (`Corrected`, `Uncorrected
    /// (Non-Fatal)`, `Uncorrected (Fatal)`), an SXid's `Fatal` or `Non-fatal`, the recovery
    /// action an Xid 154 asks for.
    pub detail: Option<String>,
    /// False where the line is from an earlier boot than the running one; None where the
    /// source does not tell.
    pub this_boot: Option<bool>,
    pub count: u64,
    /// The ordinal of the group's last line among the records read: which group is newer.
    pub last_record: u64,
    /// When the first and last were logged: seconds since boot (`[  123.456789]`) or the
    /// syslog timestamp, as the source gives it.
    pub first: Option<String>,
    pub last: Option<String>,
    /// The processes Xid lines named (`name=python3`), the first few.
    pub processes: Vec<String>,
    /// The first line of the group, as logged (bounded).
    pub example: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LoggedLine {
    pub at: Option<String>,
    pub text: String,
}
