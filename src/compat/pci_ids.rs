//! PCI device id → GPU → compute capability, for when NVML and the kernel module cannot
//! name the GPU (module not loaded, a container without the driver, `--root` of an image, a
//! node before its driver is installed): the PCI bus alone still says which GPU it is.
//!
//! Names: the NVIDIA (vendor 10de) device entries of the PCI ID database, `pci.ids`
//! (https://pci-ids.ucw.cz/), as Debian packages it; `nvidia_pci_ids.txt` is written by
//! `.ci/gen-nvidia-pci-ids` from the file `.ci/fetch-pci-ids` pins, and tests/it/pci_ids.rs
//! checks every entry against the real file. Compute capability: the chip codename through
//! [`CHIPS`] (each row citing NVIDIA's lists for that chip's products), else the bracketed
//! product name through [`gpu_from_name`] (NVIDIA's CUDA GPU lists, see arch.rs). An entry
//! neither settles has no compute capability; nothing is guessed.

use super::arch::{gpu_from_name, ProductClass};
use super::versions::ComputeCapability;

const TABLE: &str = include_str!("nvidia_pci_ids.txt");

/// One NVIDIA PCI device id as the PCI ID database names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PciGpu {
    pub device_id: u16,
    /// The pci.ids name, e.g. "GA102 [GeForce RTX 3090]".
    pub name: &'static str,
    /// The bracketed product name, e.g. "GeForce RTX 3090", when there is one.
    pub product: Option<&'static str>,
    /// The chip codename without its variant suffix, e.g. "GA102" for "GA102GL"; None for
    /// entries that are not the GPU function (audio, USB, NVSwitch, bridges) or not a chip.
    pub chip: Option<&'static str>,
    pub cc: Option<ComputeCapability>,
    pub class: ProductClass,
    /// Where the compute capability came from, or why there is none.
    pub source: &'static str,
}

impl PciGpu {
    /// What to call the GPU: the product name, else the pci.ids name.
    pub fn display_name(&self) -> &'static str {
        self.product.unwrap_or(self.name)
    }
}

/// The pci.ids `Version:` the table was generated from, e.g. "2025.06.09".
pub fn table_version() -> &'static str {
    TABLE
        .lines()
        .next()
        .and_then(|h| h.strip_prefix("# pci.ids Version: "))
        .and_then(|h| h.split(';').next())
        .unwrap_or("?")
}

/// Every (device id, pci.ids name) of the table, in the file's order.
pub fn entries() -> impl Iterator<Item = (u16, &'static str)> {
    TABLE
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (id, name) = l.split_once('\t')?;
            Some((u16::from_str_radix(id, 16).ok()?, name))
        })
}

/// The pci.ids name of an NVIDIA device id.
pub fn pci_name(device_id: u16) -> Option<&'static str> {
    entries().find(|(id, _)| *id == device_id).map(|(_, n)| n)
}

/// The GPU behind an NVIDIA PCI device id; None when pci.ids does not know the id.
pub fn gpu_from_pci_id(device_id: u16) -> Option<PciGpu> {
    Some(classify(device_id, pci_name(device_id)?))
}

/// A "10de:2684"-style id, as the PCI probe records it.
pub fn gpu_from_pci_id_text(id: &str) -> Option<PciGpu> {
    let dev = id.strip_prefix("10de:")?;
    if dev.len() != 4 {
        return None;
    }
    gpu_from_pci_id(u16::from_str_radix(dev, 16).ok()?)
}

const NOT_A_GPU: &str = "pci.ids names a non-GPU function (audio, USB, NVSwitch, bridge, ...)";
const UNKNOWN: &str = "pci.ids names no product or chip whose compute capability is listed";

fn classify(device_id: u16, name: &'static str) -> PciGpu {
    let (before, product) = match name.find('[') {
        Some(i) if name.ends_with(']') => {
            (name[..i].trim(), Some(name[i + 1..name.len() - 1].trim()))
        }
        _ => (name.trim(), None),
    };
    // The GPU function's entry is "CHIP", "CHIP [product]" or "CHIP / BOARD [product]";
    // "GA102 High Definition Audio Controller" and "[A100 NVSwitch]" are other functions.
    let first = before.split(" / ").next().unwrap_or("");
    let gpu_function = !first.is_empty()
        && !first.contains(' ')
        && !product.is_some_and(|p| p.contains("NVSwitch"));
    let chip = gpu_function.then(|| chip_base(first)).flatten();
    let mut out = PciGpu {
        device_id,
        name,
        product,
        chip,
        cc: None,
        class: ProductClass::Unknown,
        source: if gpu_function { UNKNOWN } else { NOT_A_GPU },
    };
    if !gpu_function {
        return out;
    }
    // The die settles the compute capability where CHIPS knows it: one product name can ship
    // on several dies, and pci.ids tells them apart ("GK106 [GeForce GTX 750 Ti]" is Kepler,
    // 3.0, where NVIDIA lists the GTX 750 Ti, a GM107, as 5.0). The product name gives the
    // class, and the compute capability of dies CHIPS lacks.
    let by_name = product.and_then(gpu_from_name);
    if let Some(m) = by_name {
        out.class = m.class;
    }
    if let Some(row) = chip.and_then(chip_row) {
        out.cc = Some(row.cc);
        out.source = row.source;
    } else if let Some(m) = by_name {
        out.cc = Some(m.cc);
        out.source = m.source;
    }
    out
}

/// "GA102GL" → "GA102", "GK110BGL" → "GK110", "GA107BM" → "GA107": the die without the
/// pci.ids variant suffixes (GL workstation/data center, M mobile, B revision).
fn chip_base(code: &'static str) -> Option<&'static str> {
    let mut c = code;
    for suffix in ["GLM", "GL", "M"] {
        if let Some(s) = c.strip_suffix(suffix) {
            c = s;
            break;
        }
    }
    let shaped = |s: &str| {
        let b = s.as_bytes();
        b.len() == 5
            && b[..2].iter().all(u8::is_ascii_uppercase)
            && b[2..].iter().all(u8::is_ascii_digit)
    };
    if shaped(c) {
        return Some(c);
    }
    c.strip_suffix('B').filter(|s| shaped(s))
}

/// One GPU die and its compute capability.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChipRow {
    pub chip: &'static str,
    pub cc: ComputeCapability,
    pub source: &'static str,
}

const fn row(chip: &'static str, major: u32, minor: u32, source: &'static str) -> ChipRow {
    ChipRow {
        chip,
        cc: ComputeCapability::new(major, minor),
        source,
    }
}

fn chip_row(chip: &str) -> Option<&'static ChipRow> {
    CHIPS.iter().find(|r| r.chip == chip)
}

// NVIDIA's lists give compute capability per product, pci.ids gives the chip of each product;
// a row holds where every product of that chip on NVIDIA's list has the same compute
// capability. The unit test `chips_agree_with_every_product_name` checks each row against every
// entry of its chip whose product name gpu_from_name resolves.
macro_rules! nv {
    ($products:literal) => {
        concat!(
            $products,
            " (https://developer.nvidia.com/cuda-gpus); pci.ids names them on this chip"
        )
    };
}
macro_rules! nv_old {
    ($products:literal) => {
        concat!(
            $products,
            " (developer.nvidia.com/cuda-gpus, older revision); pci.ids names them on this chip"
        )
    };
}
macro_rules! nv_legacy {
    ($products:literal) => {
        concat!(
            $products,
            " (https://developer.nvidia.com/cuda-legacy-gpus); pci.ids names them on this chip"
        )
    };
}

/// Chip codename → compute capability. Dies absent here (Fermi and older, GK11x engineering
/// parts, GB102, GB110, GB120, GB20B, GB6 samples) have none: NVIDIA's lists name no product
/// of theirs, or products of several capabilities.
pub static CHIPS: &[ChipRow] = &[
    row(
        "GK104",
        3,
        0,
        nv_old!("GeForce GTX 680/670/770, Tesla K10: 3.0"),
    ),
    row("GK106", 3, 0, nv_old!("GeForce GTX 660, Quadro K4000: 3.0")),
    row(
        "GK107",
        3,
        0,
        nv_old!("GeForce GTX 650, Quadro K2000/K600: 3.0"),
    ),
    row(
        "GK110",
        3,
        5,
        nv_old!("Tesla K20/K40, GeForce GTX 780/TITAN: 3.5"),
    ),
    row("GK180", 3, 5, nv_old!("Tesla K40c: 3.5")),
    row(
        "GK208",
        3,
        5,
        "secondary: GK208 boards (GeForce GT 630 rev. 2, GT 710/720/730) report 3.5 in GPU \
         databases; NVIDIA's lists name the boards, which also ship with Fermi dies",
    ),
    row("GK210", 3, 7, nv_old!("Tesla K80: 3.7")),
    row(
        "GM107",
        5,
        0,
        nv_legacy!("GeForce GTX 750/750 Ti, Quadro K2200/K620: 5.0"),
    ),
    row("GM108", 5, 0, nv_old!("GeForce MX110/MX130: 5.0")),
    row(
        "GM200",
        5,
        2,
        nv_legacy!("GeForce GTX TITAN X, Tesla M40, Quadro M6000: 5.2"),
    ),
    row(
        "GM204",
        5,
        2,
        nv_legacy!("GeForce GTX 980/970, Tesla M60, Quadro M5000: 5.2"),
    ),
    row(
        "GM206",
        5,
        2,
        nv_legacy!("GeForce GTX 960/950, Quadro M2000: 5.2"),
    ),
    row("GP100", 6, 0, nv_legacy!("Tesla P100, Quadro GP100: 6.0")),
    row(
        "GP102",
        6,
        1,
        nv_legacy!("TITAN Xp, GeForce GTX 1080 Ti, Tesla P40, Quadro P6000: 6.1"),
    ),
    row(
        "GP104",
        6,
        1,
        nv_legacy!("GeForce GTX 1080/1070, Tesla P4, Quadro P5000: 6.1"),
    ),
    row("GP106", 6, 1, nv_legacy!("GeForce GTX 1060: 6.1")),
    row(
        "GP107",
        6,
        1,
        nv_legacy!("GeForce GTX 1050, Quadro P1000/P600: 6.1"),
    ),
    row("GP108", 6, 1, nv_old!("GeForce GT 1030, MX150: 6.1")),
    row(
        "GV100",
        7,
        0,
        nv_legacy!("Tesla V100, TITAN V, Quadro GV100: 7.0"),
    ),
    row(
        "TU102",
        7,
        5,
        nv_old!("GeForce RTX 2080 Ti, TITAN RTX, Quadro RTX 8000/6000: 7.5"),
    ),
    row(
        "TU104",
        7,
        5,
        nv_old!("GeForce RTX 2080/2070 SUPER, Tesla T4, Quadro RTX 5000: 7.5"),
    ),
    row("TU106", 7, 5, nv_old!("GeForce RTX 2070/2060: 7.5")),
    row("TU116", 7, 5, nv_old!("GeForce GTX 1660/1650 SUPER: 7.5")),
    row(
        "TU117",
        7,
        5,
        nv_old!("GeForce GTX 1650, T1000/T600/T400: 7.5"),
    ),
    row("GA100", 8, 0, nv!("NVIDIA A100, A30: 8.0")),
    row(
        "GA102",
        8,
        6,
        nv!("GeForce RTX 3090/3080, NVIDIA A40/A10, RTX A6000: 8.6"),
    ),
    row(
        "GA103",
        8,
        6,
        nv!("GeForce RTX 3060 Ti/3080 Ti Laptop: 8.6"),
    ),
    row(
        "GA104",
        8,
        6,
        nv!("GeForce RTX 3070/3060 Ti, RTX A4000: 8.6"),
    ),
    row("GA106", 8, 6, nv!("GeForce RTX 3060, RTX A2000: 8.6")),
    row("GA107", 8, 6, nv!("GeForce RTX 3050, NVIDIA A2/A16: 8.6")),
    row(
        "AD102",
        8,
        9,
        nv!("GeForce RTX 4090, NVIDIA L40/L40S, RTX 6000 Ada: 8.9"),
    ),
    row("AD103", 8, 9, nv!("GeForce RTX 4080: 8.9")),
    row(
        "AD104",
        8,
        9,
        nv!("GeForce RTX 4070 Ti/4070, NVIDIA L4: 8.9"),
    ),
    row("AD106", 8, 9, nv!("GeForce RTX 4060 Ti: 8.9")),
    row(
        "AD107",
        8,
        9,
        nv!("GeForce RTX 4060/4050, RTX 2000 Ada: 8.9"),
    ),
    row("GH100", 9, 0, nv!("NVIDIA H100, H200, GH200: 9.0")),
    row("GB100", 10, 0, nv!("NVIDIA B200, GB200: 10.0")),
    row(
        "GB202",
        12,
        0,
        nv!("GeForce RTX 5090, RTX PRO 6000 Blackwell: 12.0"),
    ),
    row("GB203", 12, 0, nv!("GeForce RTX 5080/5070 Ti: 12.0")),
    row("GB205", 12, 0, nv!("GeForce RTX 5070: 12.0")),
    row("GB206", 12, 0, nv!("GeForce RTX 5060 Ti/5060: 12.0")),
    row("GB207", 12, 0, nv!("GeForce RTX 5050: 12.0")),
];

#[cfg(test)]
mod tests {
    use super::*;
    use ProductClass::*;

    fn get(id: u16) -> PciGpu {
        gpu_from_pci_id(id).unwrap_or_else(|| panic!("{id:04x} not in the table"))
    }

    fn is(id: u16, name: &str, cc: &str, class: ProductClass) {
        let g = get(id);
        assert_eq!(g.name, name, "{id:04x}");
        assert_eq!(
            g.cc.map(|c| c.to_string()).as_deref(),
            Some(cc),
            "{id:04x} {name}"
        );
        assert_eq!(g.class, class, "{id:04x} {name}");
        assert!(!g.source.is_empty());
    }

    fn none(id: u16) -> PciGpu {
        let g = get(id);
        assert_eq!(g.cc, None, "{id:04x} {}", g.name);
        g
    }

    #[test]
    fn the_table_is_whole_sorted_and_unique() {
        assert_eq!(table_version(), "2025.06.09");
        let rows = TABLE.lines().filter(|l| !l.starts_with('#')).count();
        let ids: Vec<u16> = entries().map(|(id, _)| id).collect();
        assert_eq!(ids.len(), rows, "every line parses");
        assert!(ids.len() > 1900);
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "sorted, no duplicates");
        assert!(entries().all(|(_, n)| !n.is_empty() && n.trim() == n));
    }

    #[test]
    fn products_and_their_compute_capability() {
        is(0x2684, "AD102 [GeForce RTX 4090]", "8.9", GeForce);
        is(0x2b85, "GB202 [GeForce RTX 5090]", "12.0", GeForce);
        is(0x2204, "GA102 [GeForce RTX 3090]", "8.6", GeForce);
        is(0x2330, "GH100 [H100 SXM5 80GB]", "9.0", DataCenter);
        is(0x20b0, "GA100 [A100 SXM4 40GB]", "8.0", DataCenter);
        is(0x1eb8, "TU104GL [Tesla T4]", "7.5", DataCenter);
        is(0x2901, "GB100 [B200]", "10.0", DataCenter);
        is(0x102d, "GK210GL [Tesla K80]", "3.7", DataCenter);
        is(0x1024, "GK180GL [Tesla K40c]", "3.5", DataCenter);
        is(0x2230, "GA102GL [RTX A6000]", "8.6", Workstation);
        is(
            0x2bb5,
            "GB202GL [RTX PRO 6000 Blackwell Server Edition]",
            "12.0",
            DataCenter,
        );
        is(
            0x25ac,
            "GA107BM / GN20-P0-R-K2 [GeForce RTX 3050 6GB Laptop GPU]",
            "8.6",
            GeForce,
        );
        let g = get(0x2b85);
        assert_eq!(g.product, Some("GeForce RTX 5090"));
        assert_eq!(g.display_name(), "GeForce RTX 5090");
        assert_eq!(g.chip, Some("GB202"));
        assert!(
            g.source.contains("developer.nvidia.com/cuda-gpus"),
            "{}",
            g.source
        );
    }

    #[test]
    fn the_chip_alone_settles_it() {
        // No product name: the die's row.
        is(0x2302, "GH100", "9.0", Unknown);
        assert_eq!(get(0x2302).display_name(), "GH100");
        // A product name that ships on another die: the die wins.
        is(0x0fc5, "GK107 [GeForce GT 1030]", "3.0", GeForce);
        is(
            0x13f8,
            "GM204GLM [Quadro M5000M / M5000 SE]",
            "5.2",
            Workstation,
        );
        assert_eq!(chip_base("GK110BGL"), Some("GK110"));
        assert_eq!(chip_base("GA107BM"), Some("GA107"));
        assert_eq!(chip_base("AD103GLM"), Some("AD103"));
        assert_eq!(chip_base("GB20B"), None);
        assert_eq!(chip_base("GK11x"), None);
        assert_eq!(chip_base("G92M"), None);
    }

    #[test]
    fn other_functions_and_unknown_dies_have_none() {
        for id in [0x22ba, 0x0fbc, 0x1af1, 0x22a3, 0x1ad6] {
            let g = none(id);
            assert_eq!(g.chip, None, "{}", g.name);
            assert_eq!(g.source, NOT_A_GPU);
        }
        // Fermi, and Blackwell dies NVIDIA's lists do not name.
        for id in [0x06c0, 0x29bc, 0x31c0, 0x3340, 0x2e2a, 0x2c2c] {
            let g = none(id);
            assert_eq!(g.source, UNKNOWN, "{}", g.name);
        }
        assert_eq!(gpu_from_pci_id(0xffff), None);
    }

    #[test]
    fn pci_id_text() {
        assert_eq!(gpu_from_pci_id_text("10de:2684").unwrap().device_id, 0x2684);
        assert_eq!(gpu_from_pci_id_text("10de:2B85").unwrap().device_id, 0x2b85);
        for bad in [
            "10de:????",
            "1002:2684",
            "10de:26840",
            "10de:",
            "2684",
            "",
            "10de:+684",
        ] {
            assert_eq!(gpu_from_pci_id_text(bad), None, "{bad:?}");
        }
    }

    /// A die's row must agree with NVIDIA's compute capability for every product pci.ids
    /// names on that die, except where the product name also ships on another die (listed
    /// here after review); a new disagreement fails until someone looks at it.
    #[test]
    fn chips_agree_with_every_product_name() {
        const OTHER_DIE: &[u16] = &[
            0x0fc5, // GK107 [GeForce GT 1030]: the GT 1030 is a GP108
            0x11c7, // GK106 [GeForce GTX 750 Ti]: the GTX 750 Ti is a GM107
            0x1407, // GM206 [GeForce GTX 750 v2]
            0x13b4, // GM107GLM [Quadro M620 Mobile]: NVIDIA lists M620 as 5.2; GM107 is 5.0
            0x13f8, // GM204GLM [Quadro M5000M / M5000 SE]: NVIDIA's legacy list says 5.0,
            0x13f9, // GM204GLM [Quadro M4000M]          GM204 is a 5.2 die (GTX 980, M60)
            0x13fa, // GM204GLM [Quadro M3000M]
        ];
        let mut backed: Vec<&str> = Vec::new();
        for (id, _) in entries() {
            let g = get(id);
            let (Some(row), Some(m)) =
                (g.chip.and_then(chip_row), g.product.and_then(gpu_from_name))
            else {
                continue;
            };
            if OTHER_DIE.contains(&id) {
                assert_ne!(
                    row.cc, m.cc,
                    "{id:04x} {} agrees now: drop it from OTHER_DIE",
                    g.name
                );
                continue;
            }
            assert_eq!(
                row.cc, m.cc,
                "{id:04x} {}: chip row vs product name",
                g.name
            );
            backed.push(row.chip);
        }
        // Every row is confirmed by at least one product on NVIDIA's lists, except GK208,
        // whose boards NVIDIA lists under names shared with Fermi dies.
        for r in CHIPS {
            assert!(
                r.chip == "GK208" || backed.contains(&r.chip),
                "{}: no product of this chip resolves by name",
                r.chip
            );
            assert!(!r.source.is_empty());
        }
    }

    #[test]
    fn how_many_gpus_have_a_compute_capability() {
        let gpus: Vec<PciGpu> = entries()
            .map(|(id, _)| get(id))
            .filter(|g| g.chip.is_some())
            .collect();
        let with = gpus.iter().filter(|g| g.cc.is_some()).count();
        // Kepler to Blackwell all resolve; what stays open is Tesla (GT2xx), Fermi (GFxxx) and
        // the Blackwell dies NVIDIA's lists do not name.
        assert!(with >= 780, "{with}");
        for g in gpus.iter().filter(|g| g.cc.is_none()) {
            let chip = g.chip.unwrap();
            assert!(
                chip.starts_with("GF")
                    || chip.starts_with("GT2")
                    || ["GB102", "GB110", "GB120"].contains(&chip),
                "{:04x} {} has no compute capability",
                g.device_id,
                g.name
            );
        }
    }
}
