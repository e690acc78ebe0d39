//! TEMPORARY stand-in until the compat tables land.
pub mod versions;
pub use versions::{ComputeCapability, CudaVersion, DriverVersion};
