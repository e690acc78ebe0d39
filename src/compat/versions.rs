//! Version types for CUDA releases, driver builds and compute capabilities.
//! They are read from broken machines, so parsing never panics and rejects
//! anything it cannot read exactly.

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

/// Digits only: `str::parse` alone would also take "+5".
fn parse_u32(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// These types serialize as strings (their Display), so their schema is a string too.
fn string_schema(description: &str, pattern: &str) -> Schema {
    json_schema!({
        "type": "string",
        "description": description,
        "pattern": pattern,
    })
}

fn all_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// A CUDA release as major.minor; patch levels never change compatibility.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CudaVersion {
    pub major: u32,
    pub minor: u32,
}

impl CudaVersion {
    pub const fn new(major: u32, minor: u32) -> Self {
        Self { major, minor }
    }

    /// "12.4", "12.4.1", "V12.4.131" (nvcc), " 11.8 ", and version.json's
    /// date-shaped "12.6.20241114" all give major.minor.
    pub fn parse(s: &str) -> Option<Self> {
        let s = s.trim();
        let s = s.strip_prefix(['V', 'v']).unwrap_or(s);
        let mut parts = s.split('.');
        let major = parse_u32(parts.next()?)?;
        let minor = parse_u32(parts.next()?)?;
        // At most patch and build, both numeric (the patch may be a date).
        let rest: Vec<&str> = parts.collect();
        if rest.len() > 2 || !rest.iter().all(|p| all_digits(p)) {
            return None;
        }
        Some(Self::new(major, minor))
    }

    /// The `1000 * major + 10 * minor` encoding of cudaDriverGetVersion,
    /// cudaRuntimeGetVersion and NVML. 0 means "no driver", hence None.
    pub fn from_encoded(v: i64) -> Option<Self> {
        if v <= 0 {
            return None;
        }
        let major = u32::try_from(v / 1000).ok()?;
        let minor = u32::try_from((v % 1000) / 10).ok()?;
        (major > 0).then_some(Self::new(major, minor))
    }

    /// Inverse of [`CudaVersion::from_encoded`].
    pub fn encoded(self) -> i64 {
        i64::from(self.major) * 1000 + i64::from(self.minor) * 10
    }
}

impl fmt::Display for CudaVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl Serialize for CudaVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl JsonSchema for CudaVersion {
    fn schema_name() -> Cow<'static, str> {
        "CudaVersion".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        string_schema(
            "A CUDA release, major.minor (\"12.4\").",
            r"^[0-9]+\.[0-9]+$",
        )
    }
}

impl<'de> Deserialize<'de> for CudaVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::parse(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("not a CUDA version: {s:?}")))
    }
}

/// A driver version like "535.104.05" or "570.26": compared numerically per
/// component ("05" == "5", missing trailing components count as 0), shown as
/// it was written.
#[derive(Clone, Debug)]
pub struct DriverVersion {
    text: String,
    parts: Vec<u32>,
}

impl DriverVersion {
    /// One to four numeric components separated by dots.
    pub fn parse(s: &str) -> Option<Self> {
        let text = s.trim();
        let mut parts = Vec::with_capacity(4);
        for p in text.split('.') {
            if parts.len() == 4 {
                return None;
            }
            parts.push(parse_u32(p)?);
        }
        Some(Self {
            text: text.to_string(),
            parts,
        })
    }

    /// The branch is the first component: 535 for "535.104.05".
    pub fn branch(&self) -> u32 {
        self.parts.first().copied().unwrap_or(0)
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    pub fn components(&self) -> &[u32] {
        &self.parts
    }

    /// Without trailing zeros, so that Hash agrees with Eq ("570.26" == "570.26.0").
    fn significant(&self) -> &[u32] {
        let n = self
            .parts
            .iter()
            .rposition(|&p| p != 0)
            .map_or(0, |i| i + 1);
        &self.parts[..n]
    }
}

impl PartialEq for DriverVersion {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for DriverVersion {}

impl Ord for DriverVersion {
    fn cmp(&self, other: &Self) -> Ordering {
        let n = self.parts.len().max(other.parts.len());
        (0..n)
            .map(|i| {
                let a = self.parts.get(i).copied().unwrap_or(0);
                let b = other.parts.get(i).copied().unwrap_or(0);
                a.cmp(&b)
            })
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    }
}

impl PartialOrd for DriverVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Hash for DriverVersion {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.significant().hash(state);
    }
}

impl fmt::Display for DriverVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Serialize for DriverVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl JsonSchema for DriverVersion {
    fn schema_name() -> Cow<'static, str> {
        "DriverVersion".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        string_schema(
            "An NVIDIA driver version as written, one to four numeric components (\"535.104.05\").",
            r"^[0-9]+(\.[0-9]+){0,3}$",
        )
    }
}

impl<'de> Deserialize<'de> for DriverVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::parse(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("not a driver version: {s:?}")))
    }
}

/// Which kind of `sm_XY` target a name denotes (CUDA 12.0+ added the suffixes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum ArchVariant {
    /// `sm_90`: the portable target.
    Generic,
    /// `sm_90a`: architecture-specific features; runs only on exactly that CC.
    ArchSpecific,
    /// `sm_100f`: family-specific features (CUDA 12.9+); runs within the family.
    FamilySpecific,
}

/// A compute capability such as 8.9.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ComputeCapability {
    pub major: u32,
    pub minor: u32,
}

impl ComputeCapability {
    pub const fn new(major: u32, minor: u32) -> Self {
        Self { major, minor }
    }

    /// "8.9", "sm_89", "compute_89", "89", "100" (10.0), "120" (12.0).
    /// Suffixed targets like "sm_90a" are refused: use [`Self::parse_target`].
    pub fn parse(s: &str) -> Option<Self> {
        match Self::parse_target(s)? {
            (cc, ArchVariant::Generic) => Some(cc),
            _ => None,
        }
    }

    /// Like [`Self::parse`], but also accepts the `a` / `f` suffixes of nvcc
    /// target names ("sm_90a", "compute_100f").
    pub fn parse_target(s: &str) -> Option<(Self, ArchVariant)> {
        let t = s.trim().to_ascii_lowercase();
        let (body, prefixed) = match t.strip_prefix("sm_").or_else(|| t.strip_prefix("compute_")) {
            Some(rest) => (rest, true),
            None => (t.as_str(), false),
        };
        if !prefixed && body.contains('.') {
            let (a, b) = body.split_once('.')?;
            let cc = Self::checked(parse_u32(a)?, parse_u32(b)?)?;
            return Some((cc, ArchVariant::Generic));
        }
        // The suffix byte is ASCII, so slicing it off stays on a char boundary.
        let (digits, variant) = match body.as_bytes().last() {
            Some(b'a') => (&body[..body.len() - 1], ArchVariant::ArchSpecific),
            Some(b'f') => (&body[..body.len() - 1], ArchVariant::FamilySpecific),
            _ => (body, ArchVariant::Generic),
        };
        if !(2..=3).contains(&digits.len()) || !all_digits(digits) || digits.starts_with('0') {
            return None;
        }
        let (major, minor) = digits.split_at(digits.len() - 1);
        Some((
            Self::checked(parse_u32(major)?, parse_u32(minor)?)?,
            variant,
        ))
    }

    /// Minor is one digit so that `sm()` reads back the same value.
    fn checked(major: u32, minor: u32) -> Option<Self> {
        ((1..=99).contains(&major) && minor <= 9).then_some(Self::new(major, minor))
    }

    /// "sm_89".
    pub fn sm(&self) -> String {
        format!("sm_{}{}", self.major, self.minor)
    }

    /// "compute_89".
    pub fn compute(&self) -> String {
        format!("compute_{}{}", self.major, self.minor)
    }
}

impl fmt::Display for ComputeCapability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl Serialize for ComputeCapability {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl JsonSchema for ComputeCapability {
    fn schema_name() -> Cow<'static, str> {
        "ComputeCapability".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        string_schema(
            "A compute capability, major.minor (\"8.9\").",
            r"^[0-9]+\.[0-9]+$",
        )
    }
}

impl<'de> Deserialize<'de> for ComputeCapability {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::parse(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("not a compute capability: {s:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cv(s: &str) -> Option<CudaVersion> {
        CudaVersion::parse(s)
    }

    #[test]
    fn cuda_version_parse() {
        let v124 = Some(CudaVersion::new(12, 4));
        assert_eq!(cv("12.4"), v124);
        assert_eq!(cv("12.4.1"), v124);
        assert_eq!(cv("V12.4.131"), v124);
        assert_eq!(cv("v12.4"), v124);
        assert_eq!(cv(" 11.8 "), Some(CudaVersion::new(11, 8)));
        assert_eq!(cv("12.6.20241114"), Some(CudaVersion::new(12, 6)));
        assert_eq!(cv("13.10"), Some(CudaVersion::new(13, 10)));
        for bad in [
            "",
            "12",
            "abc",
            "12.x",
            "12.",
            ".4",
            "12.4.x",
            "12.4.1.2.3",
            "+12.4",
            "12.-4",
            "V",
            "12 .4",
            "1.2.3.",
            "99999999999.1",
            "१२.४",
        ] {
            assert_eq!(cv(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn cuda_version_encoding() {
        assert_eq!(
            CudaVersion::from_encoded(12040),
            Some(CudaVersion::new(12, 4))
        );
        assert_eq!(
            CudaVersion::from_encoded(13000),
            Some(CudaVersion::new(13, 0))
        );
        assert_eq!(
            CudaVersion::from_encoded(9020),
            Some(CudaVersion::new(9, 2))
        );
        assert_eq!(CudaVersion::from_encoded(0), None);
        assert_eq!(CudaVersion::from_encoded(-1), None);
        assert_eq!(CudaVersion::from_encoded(999), None);
        assert_eq!(CudaVersion::from_encoded(i64::MAX), None);
        assert_eq!(CudaVersion::from_encoded(i64::MIN), None);
        assert_eq!(CudaVersion::new(12, 8).encoded(), 12080);
    }

    #[test]
    fn cuda_version_order_display_serde() {
        assert!(CudaVersion::new(12, 10) > CudaVersion::new(12, 9));
        assert!(CudaVersion::new(13, 0) > CudaVersion::new(12, 9));
        assert_eq!(CudaVersion::new(12, 4).to_string(), "12.4");
        let json = serde_json::to_string(&CudaVersion::new(12, 4)).unwrap();
        assert_eq!(json, "\"12.4\"");
        let back: CudaVersion = serde_json::from_str("\"12.4.1\"").unwrap();
        assert_eq!(back, CudaVersion::new(12, 4));
        assert!(serde_json::from_str::<CudaVersion>("\"12\"").is_err());
        assert!(serde_json::from_str::<CudaVersion>("12.4").is_err());
    }

    #[test]
    fn driver_version_parse_and_compare() {
        let d = |s| DriverVersion::parse(s).unwrap();
        assert_eq!(d("535.104.05").branch(), 535);
        assert_eq!(d(" 570.26 ").as_str(), "570.26");
        assert_eq!(d("535.104.05"), d("535.104.5"));
        assert_eq!(d("570.26"), d("570.26.0"));
        assert!(d("535.104.05") > d("535.54.03"));
        assert!(d("535.86.09") < d("535.104.05"));
        assert!(d("615") < d("615.31"));
        assert!(d("610.57.04") < d("615"));
        assert_eq!(d("580").components(), &[580]);
        assert_eq!(d("1.2.3.4").components(), &[1, 2, 3, 4]);
        for bad in [
            "",
            "abc",
            "535.",
            ".535",
            "535..1",
            "1.2.3.4.5",
            "535.104.05a",
            "-1",
            "535 104",
        ] {
            assert!(DriverVersion::parse(bad).is_none(), "{bad:?}");
        }
        assert!(DriverVersion::parse("99999999999").is_none());
    }

    #[test]
    fn driver_version_hash_agrees_with_eq() {
        use std::collections::HashSet;
        let set: HashSet<DriverVersion> = ["570.26", "570.26.0", "570.026"]
            .iter()
            .map(|s| DriverVersion::parse(s).unwrap())
            .collect();
        assert_eq!(set.len(), 1);
    }

    #[test]
    fn driver_version_serde_keeps_text() {
        let d = DriverVersion::parse("535.104.05").unwrap();
        assert_eq!(serde_json::to_string(&d).unwrap(), "\"535.104.05\"");
        let back: DriverVersion = serde_json::from_str("\"535.104.05\"").unwrap();
        assert_eq!(back.as_str(), "535.104.05");
        assert!(serde_json::from_str::<DriverVersion>("\"x\"").is_err());
    }

    #[test]
    fn compute_capability_parse() {
        let cc = ComputeCapability::new;
        let p = ComputeCapability::parse;
        assert_eq!(p("8.9"), Some(cc(8, 9)));
        assert_eq!(p("sm_89"), Some(cc(8, 9)));
        assert_eq!(p("SM_89"), Some(cc(8, 9)));
        assert_eq!(p("compute_89"), Some(cc(8, 9)));
        assert_eq!(p("89"), Some(cc(8, 9)));
        assert_eq!(p("100"), Some(cc(10, 0)));
        assert_eq!(p("120"), Some(cc(12, 0)));
        assert_eq!(p("sm_103"), Some(cc(10, 3)));
        assert_eq!(p(" 12.1 "), Some(cc(12, 1)));
        for bad in [
            "", "8", "sm_8", "sm_", "1000", "sm_8.9", "8.10", "0.5", "05", "010", "abc", "sm_90a",
            "8.9a", "compute_", "ß9",
        ] {
            assert_eq!(p(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn compute_capability_targets_and_names() {
        let cc = ComputeCapability::new;
        assert_eq!(
            ComputeCapability::parse_target("sm_90a"),
            Some((cc(9, 0), ArchVariant::ArchSpecific))
        );
        assert_eq!(
            ComputeCapability::parse_target("compute_100f"),
            Some((cc(10, 0), ArchVariant::FamilySpecific))
        );
        assert_eq!(ComputeCapability::parse_target("sm_a"), None);
        assert_eq!(cc(8, 9).sm(), "sm_89");
        assert_eq!(cc(12, 0).sm(), "sm_120");
        assert_eq!(cc(12, 0).compute(), "compute_120");
        assert_eq!(cc(8, 9).to_string(), "8.9");
        assert!(cc(10, 0) > cc(9, 0));
        assert_eq!(serde_json::to_string(&cc(8, 9)).unwrap(), "\"8.9\"");
        let back: ComputeCapability = serde_json::from_str("\"sm_120\"").unwrap();
        assert_eq!(back, cc(12, 0));
    }

    /// The hand-written schemas must accept what the hand-written Serialize writes.
    #[test]
    fn string_schemas_match_serialized_forms() {
        fn check<T: Serialize + JsonSchema>(good: &[T], bad: &[&str]) {
            let schema = schemars::schema_for!(T);
            let v = jsonschema::validator_for(schema.as_value()).unwrap();
            for g in good {
                let json = serde_json::to_value(g).unwrap();
                assert!(v.is_valid(&json), "{json} rejected");
            }
            for b in bad {
                assert!(!v.is_valid(&serde_json::json!(b)), "{b:?} accepted");
            }
        }
        check(
            &[CudaVersion::new(12, 4), CudaVersion::new(9, 0)],
            &["12", "12.4.1", "V12.4"],
        );
        check(&[ComputeCapability::new(8, 9)], &["sm_89", "89", "8.9a"]);
        let driver = |s| DriverVersion::parse(s).unwrap();
        check(
            &[driver("535.104.05"), driver("570.26"), driver(" 560 ")],
            &["", "535.", "1.2.3.4.5", "r535"],
        );
    }
}
