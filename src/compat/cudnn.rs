//! Which cuDNN a framework accepts at run time, given the one it was built against.

/// torch's rule, from torch/backends/cudnn/__init__.py `_init` (the same text in every
/// release from 1.0 to 2.15.0; read in the torch 2.15.0 wheel): another major is always
/// refused; from cuDNN 7 on a runtime minor at least the compiled one is accepted (minor
/// releases are backward compatible); before 7 the minor must be equal. A refusal raises
/// "RuntimeError: cuDNN version incompatibility: PyTorch was compiled against (A, B, C)
/// but found runtime version (D, E, F)" at the first cuDNN call, unless
/// PYTORCH_SKIP_CUDNN_COMPATIBILITY_CHECK=1.
pub const TORCH_RULE_SOURCE: &str = "torch/backends/cudnn/__init__.py (_init), torch 2.15.0";

pub fn torch_accepts(compiled: (u32, u32), runtime: (u32, u32)) -> bool {
    if runtime.0 != compiled.0 {
        return false;
    }
    if runtime.0 < 7 {
        runtime.1 == compiled.1
    } else {
        runtime.1 >= compiled.1
    }
}

/// "9.10.2.21" (a wheel version) or "9.1.0" → (9, 10).
pub fn major_minor(version: &str) -> Option<(u32, u32)> {
    let mut parts = version.split(['.', '+']);
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torch_rule_per_major() {
        assert!(torch_accepts((9, 1), (9, 10)));
        assert!(!torch_accepts((9, 10), (9, 1)));
        assert!(!torch_accepts((8, 9), (9, 1)));
        assert!(torch_accepts((8, 3), (8, 9)));
        assert!(!torch_accepts((6, 0), (6, 1)));
        assert_eq!(major_minor("9.10.2.21"), Some((9, 10)));
        assert_eq!(major_minor("8"), None);
    }
}
