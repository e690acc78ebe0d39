use serde::{Deserialize, Serialize};
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct CudaVersion { pub major: u32, pub minor: u32 }
impl CudaVersion {
    pub const fn new(major: u32, minor: u32) -> Self { CudaVersion { major, minor } }
    pub fn parse(s: &str) -> Option<Self> {
        let s = s.trim().trim_start_matches('V');
        let mut it = s.split('.');
        let major = it.next()?.parse().ok()?;
        let minor = it.next()?.parse().ok()?;
        Some(CudaVersion { major, minor })
    }
    pub fn from_encoded(v: i64) -> Option<Self> {
        if v <= 0 { return None; }
        Some(CudaVersion { major: (v / 1000) as u32, minor: ((v % 1000) / 10) as u32 })
    }
}
impl std::fmt::Display for CudaVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { write!(f, "{}.{}", self.major, self.minor) }
}
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ComputeCapability { pub major: u32, pub minor: u32 }
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct DriverVersion { text: String, parts: Vec<u32> }
impl DriverVersion {
    pub fn parse(s: &str) -> Option<Self> { let parts: Option<Vec<u32>> = s.trim().split('.').map(|p| p.parse().ok()).collect(); Some(DriverVersion { text: s.trim().into(), parts: parts? }) }
    pub fn as_str(&self) -> &str { &self.text }
    pub fn branch(&self) -> u32 { self.parts[0] }
}
