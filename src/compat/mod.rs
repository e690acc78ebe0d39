//! Compatibility knowledge tables (filled in by the compat work).
