//! The fake libnccl's configuration (the JSON named by `GPUDOCTOR_FAKE_NCCL`; without it
//! the defaults below: a working NCCL 2.21.5 over P2P).
//!
//! Shared by the cdylib (which reads it) and the tests (tests/util/fake_nccl.rs writes it).

use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct FakeNccl {
    /// ncclGetVersion: X·10000 + Y·100 + Z (22105 = 2.21.5).
    pub version: i32,
    /// ncclCommInitAll returns this ncclResult_t (1 ncclUnhandledCudaError, 2 ncclSystemError…).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub init_error: Option<i32>,
    /// What ncclGetLastError says after the failed init, and the "NCCL WARN" line it logs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub init_message: Option<String>,
    /// This exported symbol sleeps forever (ncclCommInitAll, ncclGroupEnd, ncclCommDestroy…).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hang_in: Option<String>,
    /// This exported symbol raises SIGSEGV.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crash_in: Option<String>,
    /// The all-reduce adds 1.0 to element 7 of the last rank's result.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub wrong_sum: bool,
    /// The transport the channel lines name ("P2P/CUMEM/read"); NCCL_P2P_DISABLE=1 makes it
    /// "SHM/direct/direct", as the real library falls back.
    pub transport: String,
}

impl Default for FakeNccl {
    fn default() -> FakeNccl {
        FakeNccl {
            version: 22105,
            init_error: None,
            init_message: None,
            hang_in: None,
            crash_in: None,
            wrong_sum: false,
            transport: "P2P/CUMEM/read".into(),
        }
    }
}
